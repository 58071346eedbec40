"""The HTML report of a tiny campaign, opened in headless Chromium."""
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import run_campaign

HOSTILE = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
           '"quoted" & <b>bold</b>')
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("report")
    config = {
        "campaign": "reported", "repetitions": 4, "threads": ["all"],
        "tracing": {"when": "always"},  # affinity matrices, so every placement has its J
        "machines": {"here": {"topology": "auto"}, "nehalem": {"topology": "nehalem"}},
        "benchmarks": {
            "spin": {"source": "tests/data/spin.c", "input": "15", "description": HOSTILE},
            "slow": {"source": "tests/data/spin.c", "input": "30"},
        },
    }
    (work / "campaign.yaml").write_text(yaml.safe_dump(config))
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"report: {work / 'results' / 'reported' / 'report' / 'index.html'}" in run.stdout
    return work


def index(work: Path) -> Path:
    return work / "results" / "reported" / "report" / "index.html"


@pytest.mark.slow
def test_hostile_text_is_escaped_and_nothing_is_fetched(campaign):
    html = index(campaign).read_text()
    assert "<script>window.__pwned" not in html and "onerror=\"window" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "url(http" not in html and "@import" not in html


@pytest.mark.slow
def test_the_report_renders_in_chromium(campaign, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url))
        page.goto(index(campaign).as_uri())
        page.wait_for_load_state("load")
        assert page.locator("table.summary").first.is_visible()
        assert page.locator("table.summary th", has_text="here").first.is_visible()
        page.locator("details.bench summary").first.click()  # a benchmark's details, opened
        assert page.locator("figure.plot svg").first.is_visible()
        assert page.locator("img.lstopo").first.evaluate("img => img.naturalWidth") > 0
        assert page.locator(".description").first.inner_text().startswith("<script>")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert problems == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


@pytest.mark.slow
def test_planned_machine_placements_are_drawn(campaign):
    html = index(campaign).read_text()
    assert "nehalem" in html and "planned, not measured" in html
    assert "Thread → PU: 0 2 4 6 1 3 5 7" in html  # compact on the Nehalem preset


@pytest.mark.slow
def test_rebuilding_the_report_measures_nothing(campaign):
    journal = campaign / "results" / "reported" / "here" / "journal" / "spin"
    before = {p.name: p.read_text() for p in journal.glob("*.jsonl")}
    rebuilt = run_campaign(campaign, "--forcerun", "report")
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:]
    assert "rule measure" not in rebuilt.stdout + rebuilt.stderr
    assert "rule report" in rebuilt.stdout + rebuilt.stderr
    assert {p.name: p.read_text() for p in journal.glob("*.jsonl")} == before


@pytest.mark.slow
def test_snakemake_report_includes_ours(campaign):
    archive = campaign / "snakemake-report.zip"
    made = run_campaign(campaign, "--report", str(archive))
    assert made.returncode == 0, made.stderr[-3000:]
    with zipfile.ZipFile(archive) as bundle:
        ours = [bundle.read(name).decode() for name in bundle.namelist()
                if name.endswith("/index.html")]
    assert len(ours) == 1 and "pinbench campaign <code>reported</code>" in ours[0]
    assert "figure class=\"plot\"" in ours[0]
    shutil.rmtree(campaign / ".snakemake", ignore_errors=True)


@pytest.mark.slow
def test_strategy_tables_show_each_placements_objective(campaign):
    html = index(campaign).read_text()
    table = html[html.index('<table class="cells">'):]
    table = table[:table.index("</table>")]
    assert '<th title="objective J' in table
    assert re.search(r"<th>compact</th><td>[0-9.e+]+</td>", table)  # a number, not a dash
    assert re.search(r"<th>os</th><td>–</td>", table)  # os places nothing: no J


def test_verdict_wording_follows_the_verdict(tmp_path):
    """A winner not faster than every other strategy is never called clear, the report-wide
    decision is shown beside the cell's, a cell without a winner says what it could have
    found (a row is a dict: a column named like a dict method once read as that method)."""
    import csv

    from pinbench.results.layout import Layout
    from pinbench.report.html_report import build_report
    from pinbench.stats.analyse import VERDICT_COLUMNS

    layout = Layout(str(tmp_path / "c"))
    common = {"machine": "m", "threads": 2, "baseline": "os", "tests": 2, "tests_report": 6,
              "coincide": False, "drift": False, "noisy_runs": 0}
    rows = [dict.fromkeys(VERDICT_COLUMNS, "") | common | {
        "benchmark": bench, "best": "a", "speedup_median": 1.2, "p_raw": 0.01,
        "p_adjusted": 0.02, "runner_up": "b", "p_best_vs_others": p, "clear_winner": p <= 0.05,
        "best_report": report, "p_report": 0.03 if report else "",
        "detectable_report": "" if report else 1.0876} for bench, p, report in
        (("x", 0.3, ""), ("y", 0.001, "a"))]
    rows.append(dict.fromkeys(VERDICT_COLUMNS, "") | common | {
        "benchmark": "z", "detectable": 1.0512, "drift": True, "drift_p": 0.001,
        "drift_p_adjusted": 0.006, "run_order": "back-to-back"})
    path = tmp_path / "c" / "stats" / "verdicts.csv"
    path.parent.mkdir(parents=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, VERDICT_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    # results of an older pinbench: an environment.json without the system checks
    (tmp_path / "c" / "m").mkdir()
    (tmp_path / "c" / "m" / "environment.json").write_text('{"hostname": "old"}')
    config = {"campaign": "c", "machines": {"m": {"topology": "auto"}}, "benchmarks": {},
              "baseline": "os", "confidence": 0.95}
    html = build_report(layout, config, ["m"]).read_text()
    assert "<td>old</td>" in html
    x, y, z = (html.index(f"<td>{b}</td>") for b in "xyz")
    assert "not clearly faster than every other strategy, b the next (p 0.3)" in html[x:y]
    assert "none found (a speedup of 1.088 would have been)" in html[x:y]
    assert "clearly faster than every other strategy, b the next (p 0.001)" in html[y:z]
    assert "<strong>a</strong> faster</td>\n<td>0.01 / 0.02 / 0.03</td>" in html[y:z]
    assert "no significant difference (2 tests); a speedup of 1.051 would have been found" in \
        html[z:]
    assert "none found (too few runs to find any)" in html[z:]
    assert "drift</span> (p 0.006 over the jobs), <strong>runs back to back" in html[z:]
    assert "Holm&#39;s step-down over all 6" in html or "Holm's step-down over all 6" in html


def test_measurements_set_aside_are_shown_not_hidden(tmp_path):
    """A journal set aside because the measurement changed is listed with what changed and how
    many finished runs it holds, both at the end of the campaign and in the report."""
    from pinbench.measure.journal import Journal
    from pinbench.results.layout import Layout
    from pinbench.workflow.outcome import set_aside
    from pinbench.report.html_report import build_report

    layout = Layout(str(tmp_path / "c"))
    path = Path(layout.journal("m", "spin", 2))
    first = Journal(path, "a", header={"parts": {"binary": "1", "placement of gp": "x"}})
    for rep in range(3):
        first.append({"strategy": "gp", "repetition": rep, "time_s": 1.0})
    first.close()
    Journal(path, "b", header={"parts": {"binary": "1", "placement of gp": "y"}}).close()
    [line] = set_aside(layout, ["m"])
    assert line.startswith("m/spin/t2: 3 runs set aside (placement of gp changed): ")
    config = {"campaign": "c", "machines": {"m": {"topology": "auto"}}, "benchmarks": {},
              "baseline": "os", "confidence": 0.95}
    html = build_report(layout, config, ["m"]).read_text()
    assert "Measurements set aside" in html and "3 runs (placement of gp changed)" in html


@pytest.mark.slow
def test_first_screen_is_the_overview(campaign):
    """At 1400 px wide, the overview matrix and its legends fit in the first 1000 px; the page
    runs no script; compact and scatter (one placement on this machine) are one cell."""
    from playwright.sync_api import sync_playwright

    html = index(campaign).read_text()
    assert "<script" not in html.lower()
    overview = html[html.index('<table class="overview">'):]
    overview = overview[:overview.index("</table>")]
    assert overview.count("same placement: compact = scatter") == 2  # both benchmarks
    assert re.search(r'<td colspan="2" class="cell[^"]* merged"', overview)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(index(campaign).as_uri())
        for selector in ("table.overview", "dl.marks", ".scale"):
            box = page.locator(selector).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= 1000, (selector, box)
        assert page.locator("table.overview td.cell").first.is_visible()
        # details closed: the benchmarks' tables are one click away
        assert not page.locator("details.bench table.cells").first.is_visible()
        page.locator("details.bench summary").first.click()
        assert page.locator("details.bench table.cells").first.is_visible()
        browser.close()


@pytest.mark.slow
def test_each_warning_is_said_once_per_section(campaign):
    html = index(campaign).read_text()
    articles = re.findall(r"<article id=\"bench-.*?</article>", html, re.S)
    assert articles
    for article in articles:
        notes = re.findall(r"<li>(.*?)</li>", article.split('<ol class="notes">')[-1]
                           .split("</ol>")[0], re.S) if 'class="notes"' in article else []
        assert len(notes) == len(set(notes))
        table = article[:article.index("</table>")]
        for note in notes:
            assert note not in table  # rows carry [n], not the text
        marks = set(re.findall(r'<sup class="note">\[(\d+)\]</sup>', table))
        assert marks == {str(n) for n in range(1, len(notes) + 1)}


@pytest.mark.slow
def test_tables_and_figures_are_exported_with_the_campaign(campaign):
    report = index(campaign).parent
    for name in ("overview.csv", "summary.csv"):
        text = (report / name).read_text()
        assert text.startswith("# campaign: reported\n# generated: ")
        assert "# confidence: 0.95\n# baseline: os\n" in text
    rows = read_exported_csv(report / "overview.csv")
    assert {r["strategy"] for r in rows} >= {"os", "random", "compact", "scatter"}
    assert {r["experiment"] for r in rows if r["strategy"] == "scatter"} == {"compact"}
    for name in ("overview.md", "summary.md"):
        assert "campaign: reported" in (report / name).read_text().splitlines()[0]
    figures = sorted((report / "figures").glob("*.svg"))
    assert {f.name for f in figures} >= {"here-spin-t2-times.svg", "here-spin-t2-order.svg"} \
        or any(f.name.endswith("-order.svg") for f in figures)
    for figure in figures:
        text = figure.read_text()
        assert text.startswith("<?xml") and "campaign: reported" in text
    assert "benchmarks for ±0.1" in index(campaign).read_text()


def read_exported_csv(path: Path) -> list[dict]:
    import csv

    with path.open(newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@pytest.mark.slow
def test_progress_lines_in_the_measurement_logs(campaign):
    logs = sorted((campaign / "results" / "reported" / "here" / "logs" / "measure").rglob("*.log"))
    text = "".join(log.read_text() for log in logs)
    assert re.search(r"\] 12/12 runs \(100%\); [\d.]+ runs/s; this cell done in \d+ s; "
                     r"campaign: job \d of 2", text)
    assert re.search(r"campaign: job 1 of 2, about [\dmin hs]+ left", text)
