"""The HTML report of a tiny campaign and of a generated one of 128 cells, opened in
headless Chromium."""
import csv
import importlib.util
import os
import re
import shutil
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, report_text, run_campaign
from optional_tools import need

HOSTILE = ('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
           '"quoted" & <b>bold</b>')
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


def page(work: Path, kind: str, name: str) -> Path:
    """A benchmark's or a machine's page of the tiny campaign's report."""
    return index(work).parent / kind / f"{name}.html"


@contextmanager
def browser(problems: list[str]):
    """Headless Chromium; each page it opens (the function yielded) adds to ``problems``
    what it logs as an error or warning, its uncaught errors and any request beyond the
    report's own files."""
    need("chromium")
    from playwright.sync_api import sync_playwright

    def new_page(width: int = 1280, height: int = 900):
        opened = chromium.new_page(viewport={"width": width, "height": height})
        opened.on("console", lambda m: problems.append(m.text)
                  if m.type in ("error", "warning") else None)
        opened.on("pageerror", lambda error: problems.append(str(error)))
        opened.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:"))
                  else problems.append(r.url))
        return opened

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                              args=CHROMIUM_ARGS)
        yield new_page
        chromium.close()


def drawn(figure) -> bool:
    """Whether a figure of a benchmark's page has its SVG, once scrolled to."""
    figure.scroll_into_view_if_needed()
    figure.locator("svg").wait_for(state="visible", timeout=5000)
    return figure.locator("svg circle").count() > 0


@pytest.mark.slow
def test_hostile_text_is_escaped_and_nothing_is_fetched(campaign):
    report = index(campaign).parent
    pages = [index(campaign), *sorted(report.glob("*/*.html"))]
    assert {p.relative_to(report).as_posix() for p in pages} == {
        "index.html", "benchmarks/slow.html", "benchmarks/spin.html", "machines/here.html",
        "machines/nehalem.html"}
    for html in map(Path.read_text, pages):
        assert "<script>window.__pwned" not in html and "onerror=\"window" not in html
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
        assert "url(http" not in html and "@import" not in html
    for described in (index(campaign), page(campaign, "benchmarks", "spin")):
        assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in described.read_text()
    for script in report.rglob("*.js"):  # the drawing script and the pages' data
        text = script.read_text()
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg\b)", text), script
        assert not re.search(r"\b(fetch|XMLHttpRequest|import|eval|innerHTML)\b", text), script


@pytest.mark.slow
def test_the_report_renders_in_chromium(campaign, tmp_path):
    """The first page, a benchmark's page with its figures drawn (one saved as SVG, the
    campaign's metadata in it) and a machine's page with its drawing, with nothing logged."""
    problems = []
    with browser(problems) as new_page:
        first = new_page()
        first.goto(index(campaign).as_uri())
        assert first.locator("table.summary").first.is_visible()
        assert first.locator("table.summary th", has_text="here").first.is_visible()
        assert first.locator(".description").first.inner_text().startswith("<script>")
        first.locator("#benchmarks a", has_text="spin").click()  # its page, opened
        first.wait_for_load_state("load")
        assert first.url == page(campaign, "benchmarks", "spin").as_uri()
        assert first.locator(".description").first.inner_text().startswith("<script>")
        figures = first.locator("figure.drawn")
        assert figures.count() == 2 and all(drawn(figures.nth(k)) for k in range(2))
        with first.expect_download() as download:
            figures.first.locator("a.save").click()
        saved = Path(download.value.path()).read_text()
        assert saved.startswith("<?xml") and "<svg" in saved and "campaign: reported" in saved
        threads = len(os.sched_getaffinity(0))  # all of this machine's
        assert f"<title>spin, {threads} threads, here</title>" in saved
        assert download.value.suggested_filename == f"here-spin-t{threads}-times.svg"
        assert first.evaluate("typeof window.__pwned") == "undefined"
        first.screenshot(path=str(tmp_path / "benchmark.png"), full_page=True)
        machine = new_page()
        machine.goto(page(campaign, "machines", "here").as_uri())
        assert machine.locator("img.lstopo").first.evaluate("img => img.naturalWidth") > 0
        assert machine.locator("figure.placement").count() > 0
    assert problems == []
    assert (tmp_path / "benchmark.png").stat().st_size > 10_000


@pytest.mark.slow
def test_planned_machine_placements_are_drawn(campaign):
    assert "nehalem" in index(campaign).read_text()
    assert "planned, not measured" in index(campaign).read_text()
    html = page(campaign, "machines", "nehalem").read_text()
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
        # our folder, as Snakemake names it: snakemake-report/data/raw/<digest>/
        ours = {name.split("/", 4)[-1]: bundle.read(name).decode()
                for name in bundle.namelist() if name.startswith("snakemake-report/data/raw/")}
    assert "pinbench campaign <code>reported</code>" in ours["index.html"]
    assert 'figure class="plot drawn"' in ours["benchmarks/spin.html"]  # the pages beside it
    assert "pinbenchPage(" in ours["benchmarks/spin.js"] and "report.js" in ours
    shutil.rmtree(campaign / ".snakemake", ignore_errors=True)


@pytest.mark.slow
def test_strategy_tables_show_each_placements_objective(campaign):
    html = page(campaign, "benchmarks", "spin").read_text()
    table = html[html.index('<table class="cells">'):]
    table = table[:table.index("</table>")]
    assert '<th title="objective J' in table
    assert re.search(r"<th>compact</th><td>[0-9.e+]+</td>", table)  # a number, not a dash
    assert re.search(r"<th>os</th><td>–</td>", table)  # os places nothing: no J


def verdicts_campaign(tmp_path: Path):
    """(layout, configuration) of a campaign ``c`` in ``tmp_path`` of four cells' verdicts
    (``verdicts.csv``) and an environment.json of an older pinbench, without the system
    checks."""
    from pinbench.results.layout import Layout
    from pinbench.stats.analyse import VERDICT_COLUMNS

    layout = Layout(str(tmp_path / "c"))
    common = {"machine": "m", "threads": 2, "baseline": "os", "tests": 2, "tests_report": 6,
              "coincide": False, "drift": False, "noisy_runs": 0, "slower": 0,
              "outcome": "none", "outcome_report": "none", "decision_report": "fwer"}
    rows = [dict.fromkeys(VERDICT_COLUMNS, "") | common | {
        "benchmark": bench, "best": "a", "speedup_median": 1.2, "p_raw": 0.01,
        "p_adjusted": 0.02, "runner_up": "b", "p_best_vs_others": p, "clear_winner": p <= 0.05,
        "best_report": report, "p_report": 0.03 if report else "",
        "detectable_report": "" if report else 1.0876} for bench, p, report in
        (("x", 0.3, ""), ("y", 0.001, "a"))]
    rows.append(dict.fromkeys(VERDICT_COLUMNS, "") | common | {
        "benchmark": "z", "detectable": 1.0512, "too_few": "with 3 runs against 3 (...)",
        "drift": True, "drift_p": 0.001,
        "drift_p_adjusted": 0.006, "run_order": "back-to-back"})
    rows.append(dict.fromkeys(VERDICT_COLUMNS, "") | common | {
        "benchmark": "s", "outcome": "slower", "outcome_report": "slower", "slower": 2,
        "detectable": 1.05, "detectable_report": 1.08})
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
    return layout, config


def test_verdict_wording_follows_the_verdict(tmp_path):
    """A winner not faster than every other strategy is never called clear, the report-wide
    decision is shown beside the cell's, a cell without a winner says what it could have
    found (a row was a dict: a column named like a dict method once read as that method)."""
    from pinbench.report.html_report import build_report

    layout, config = verdicts_campaign(tmp_path)
    build_report(layout, config, ["m"])
    assert "<td>old</td>" in Path(layout.report_page("machines", "m")).read_text()
    x, y, z = (Path(layout.report_page("benchmarks", b)).read_text() for b in "xyz")
    assert "not clearly faster than every other strategy, b the next (p 0.3)" in x
    assert "none found (a speedup of 1.088 would have been)" in x
    assert "clearly faster than every other strategy, b the next (p 0.001)" in y
    assert "<strong>a</strong> faster</td>\n<td>0.01 / 0.02 / 0.03</td>" in y
    assert "no significant difference (2 tests); a speedup of 1.051 would have been found" in z
    assert "none found (too few runs: with 3 runs against 3 (...))" in z
    slower = Path(layout.report_page("benchmarks", "s")).read_text()
    assert "<strong>pinning is slower here</strong>: the best placement is slower than os" in slower
    assert "<td><strong>pinning is slower here</strong></td>" in slower
    assert "drift</span> (p 0.006 over the jobs), <strong>runs back to back" in z
    assert "Holm&#39;s step-down over all 6" in x or "Holm's step-down over all 6" in x


def test_the_pages_render_the_results_read_once_and_read_no_file(tmp_path):
    """The report reads the campaign's files once, into one object; rendered with the
    campaign's folder gone, it writes the same pages as a build from the files."""
    from pinbench.report.campaign_results import CampaignResults
    from pinbench.report.html_report import build_report, render

    layout, config = verdicts_campaign(tmp_path)
    results = CampaignResults.load(layout, config, ["m"])
    assert [v.benchmark for v in results.verdicts] == ["x", "y", "z", "s"]
    assert results.machines["m"].environment == {"hostname": "old"}
    build_report(layout, config, ["m"])
    (tmp_path / "c").rename(tmp_path / "built")
    render(results)
    pages = sorted(p.relative_to(tmp_path / "built") for p in (tmp_path / "built").rglob("*.html")
                   if "report" in p.parts)
    assert len(pages) == 6  # the first page, four benchmarks' and the machine's
    assert sorted(p.relative_to(tmp_path / "c") for p in (tmp_path / "c").rglob("*")
                  if p.suffix == ".html") == pages
    for page in pages:
        built, rendered = ((tmp_path / root / page).read_text() for root in ("built", "c"))
        assert re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", built) == \
            re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", rendered), page


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
    runs no script; compact and scatter, where they are one placement (on a machine of two
    cores: here, for both benchmarks), are one cell; a benchmark's tables are one click
    away, on its page."""
    html = index(campaign).read_text()
    assert "<script" not in html.lower()
    overview = html[html.index('<table class="overview">'):]
    overview = overview[:overview.index("</table>")]
    with open(campaign / "results" / "reported" / "runs.csv", newline="") as handle:
        merged = {(row["machine"], row["benchmark"]) for row in csv.DictReader(handle)
                  if row["strategy"] == "compact" and "scatter" in row["stands_for"].split()}
    assert overview.count("same placement: compact = scatter") == len(merged)
    assert bool(re.search(r'<td colspan="2" class="cell[^"]* merged"', overview)) == bool(merged)
    problems = []
    with browser(problems) as new_page:
        first = new_page(1400, 1000)
        first.goto(index(campaign).as_uri())
        for selector in ("table.overview", "dl.marks", ".scale"):
            box = first.locator(selector).first.bounding_box()
            assert box is not None and box["y"] + box["height"] <= 1000, (selector, box)
        assert first.locator("table.overview td.cell").first.is_visible()
        assert first.locator("table.cells").count() == 0  # on the benchmarks' pages
        first.locator("table.overview th a").first.click()
        first.wait_for_load_state("load")
        assert first.locator("table.cells").first.is_visible()
    assert problems == []


@pytest.mark.slow
def test_each_warning_is_said_once_per_section(campaign):
    html = report_text(campaign / "results" / "reported")
    articles = re.findall(r"<article class=\"cell\" id=.*?</article>", html, re.S)
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
    # the affinity matrices (the cells' figures are saved from their pages: above)
    figures = sorted((report / "figures").glob("*.svg"))
    assert any(f.name.startswith("here-spin-t") for f in figures)
    assert figures and all(f.name.endswith("-affinity.svg") for f in figures)
    for figure in figures:
        text = figure.read_text()
        assert text.startswith("<?xml") and "campaign: reported" in text
    assert "benchmarks for ±0.1" in index(campaign).read_text()


def read_exported_csv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@pytest.mark.slow
def test_progress_lines_in_the_measurement_logs(campaign):
    logs = sorted((campaign / "results" / "reported" / "here" / "logs" / "measure").rglob("*.log"))
    text = "".join(log.read_text() for log in logs)
    assert re.search(r"\] 12/12 runs \(100%\); [\d.]+ runs/s; this cell done in \d+ s; "
                     r"campaign: job \d of 2", text)
    assert re.search(r"campaign: job 1 of 2, about [\dmin hs]+ left", text)


def scale_script():
    """perf/campaign_scale.py, whose campaigns of N cells the tests below report."""
    spec = importlib.util.spec_from_file_location("campaign_scale",
                                                  ROOT / "perf" / "campaign_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The generated campaign's cells: 32 benchmarks at 4 thread counts on one machine.
CELLS = 128


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """perf/campaign_scale.py's planned campaign of :data:`CELLS` cells, placed by pinbench,
    its runs synthetic in the real format, analysed and reported as measured: its results."""
    scale = scale_script()
    work = tmp_path_factory.mktemp("scale") / "work"
    config = scale.write_campaign(CELLS, 5, work)
    run = run_campaign(work, campaign=work / "campaign.json")
    assert run.returncode == 0, run.stderr[-3000:]
    scale.synthetic_runs(work, config)
    scale.analyse(work)
    scale.report(work)
    return work / "results" / config["campaign"]


@pytest.mark.slow
def test_a_generated_campaign_s_first_page_keeps_its_budget_and_opens(generated):
    """The first page of a campaign of 128 cells within its budget per cell, a page per
    benchmark, and the first page, a benchmark's page (its figures drawn) and the machine's
    page opened in headless Chromium with nothing logged."""
    from pinbench.report.html_report import INDEX_BUDGET

    report = generated / "report"
    fixed, per_cell = INDEX_BUDGET
    size = (report / "index.html").stat().st_size
    assert size <= fixed + per_cell * CELLS, f"{size} bytes: {(size - fixed) / CELLS:.0f} a cell"
    assert len(list((report / "benchmarks").glob("*.html"))) == CELLS // 4
    problems = []
    with browser(problems) as new_page:
        first = new_page()
        first.goto((report / "index.html").as_uri())
        assert first.locator("table.overview tbody tr").count() == CELLS
        first.locator("table.overview th a").last.click()  # the last benchmark's page
        first.wait_for_load_state("load")
        assert first.url.endswith(f"/benchmarks/b{CELLS // 4 - 1:05d}.html")
        figures = first.locator("figure.drawn")
        assert figures.count() == 8 and drawn(figures.last) and drawn(figures.first)
        machine = new_page()
        machine.goto((report / "machines" / "big.html").as_uri())
        # compact and scatter at 4 thread counts (os places nothing)
        assert machine.locator("figure.placement").count() == 8
    assert problems == []


#: Experiment labels as long as the report makes them.
NAMES = ["os", "random", "compact (+1)", "scatter", "lp-compact", "lp-scatter (+1)", "gp",
         "lpgp", "gplp", "hierarchical"]


def figure_cases() -> dict[str, list[dict]]:
    """Each case's series (:func:`pinbench.report.campaign_data.benchmark_sections`)."""
    import numpy as np

    rng = np.random.default_rng(3)
    return {
        "ten experiments, busy runs": [
            {"label": name, "runs": [[int(i), 12.5 + float(rng.random()), int(i % 7 == 0)]
                                     for i in rng.permutation(350)[:35]]} for name in NAMES],
        "one run": [{"label": "os", "runs": [[0, 0.01, 0]]}],
        "equal times, a strategy without runs": [
            {"label": "os", "runs": [[k, 1.0, 0] for k in range(5)]},
            {"label": "compact", "runs": []}],
        "a large metric": [{"label": name, "runs": [[k, 1.2e9 + 1e7 * k, 1] for k in range(9)]}
                           for name in NAMES[:3]],
    }


@pytest.mark.slow
def test_drawn_figures_keep_everything_inside_them(tmp_path):
    """Every mark and text the pages' script draws lies inside its figure, the box plot's
    labels do not overlap, whatever the labels, the values and the runs."""
    from pinbench.report.benchmark_pages import data_script, page_data
    from pinbench.report.html_report import TEMPLATES

    cases = figure_cases()
    sections = [{"figure": f"f{k}", "benchmark": "b", "threads": 2, "machine": "m",
                 "series": series} for k, series in enumerate(cases.values())]
    meta = {"Description": "campaign: c", "Date": "2026-01-01 00:00 UTC"}
    (tmp_path / "data.js").write_text(data_script(page_data(
        sections, meta, "other processes > 10% of the CPUs", "run time (s)")))
    shutil.copyfile(TEMPLATES / "report.js", tmp_path / "report.js")
    figures = "".join(f'<figure data-figure="f{k}" data-kind="{kind}"></figure>'
                      for k in range(len(cases)) for kind in ("times", "order"))
    (tmp_path / "page.html").write_text(
        f"<!DOCTYPE html><html><body>{figures}<script src='report.js'></script>"
        "<script src='data.js'></script></body></html>")
    problems = []
    with browser(problems) as new_page:
        opened = new_page(4000, 3000)  # every figure in view: all drawn
        opened.goto((tmp_path / "page.html").as_uri())
        opened.wait_for_function("document.querySelectorAll('figure svg').length == 8")
        outside = opened.evaluate("""() => [...document.querySelectorAll('figure svg')].flatMap(
            (svg, k) => {
              const box = svg.getBoundingClientRect();
              return [...svg.querySelectorAll('text, circle, line, rect')].map(mark => {
                const r = mark.getBoundingClientRect();
                return r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
                  r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5
                  ? `figure ${k}: ${mark.tagName} ${mark.textContent}` : null;
              }).filter(Boolean);
            })""")
        overlapping = opened.evaluate("""() => [...document.querySelectorAll(
            'figure[data-kind=times] svg')].flatMap(svg => {
              const labels = [...svg.querySelectorAll('text[text-anchor=middle]')]
                .filter(t => !t.getAttribute('transform')).map(t => t.getBoundingClientRect());
              return labels.slice(1).filter((r, k) => r.left < labels[k].right)
                .map(r => r.left);
            })""")
        assert opened.locator("svg title").first.text_content() == "b, 2 threads, m"
    assert problems == [] and outside == [] and overlapping == []
