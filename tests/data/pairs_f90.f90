! pairs_f90.f90 -- pinbench tracer test: Fortran OpenMP program with planted pair sharing.
!
! With N threads and h = N/2, threads i and i+h (i < h) share one buffer: each round,
! member m rewrites its half from both halves of the previous copy (double buffered,
! a team barrier between rounds), so every line of a pair's buffer is touched by both
! members and by no other thread.  Each pair's column is padded by 16 words, so pairs
! never share a line whatever the alignment of ALLOCATE; the owners first-touch their
! halves and the master does not touch the buffers.  A lone last thread (N odd) idles.
!
! The work is done in subroutines with explicit-shape dummy arguments: indexing the
! shared allocatable inside the parallel region would make every thread read its
! descriptor (on the master's stack) at every access, which the tracers rightly report
! as all threads sharing those lines.
! Usage: pairs_f90 [rounds]   (prints "checksum: <n>")
module pairs_kernel
  implicit none
  integer, parameter :: words = 1024, pad = 16
contains
  subroutine first_touch(col, lo, hi)
    integer(8), intent(inout) :: col(words + pad, 2)
    integer, intent(in) :: lo, hi
    integer :: k
    do k = lo, hi
       col(k, 1) = k
    end do
  end subroutine first_touch

  subroutine step(col, lo, hi, src, dst, r)
    integer(8), intent(inout) :: col(words + pad, 2)
    integer, intent(in) :: lo, hi, src, dst, r
    integer :: k
    do k = lo, hi
       col(k, dst) = 3 * col(k, src) + col(mod(k - 1 + words / 2, words) + 1, src) + r
    end do
  end subroutine step

  integer(8) function half_sum(col, lo, hi, c)
    integer(8), intent(in) :: col(words + pad, 2)
    integer, intent(in) :: lo, hi, c
    half_sum = sum(col(lo:hi, c))
  end function half_sum
end module pairs_kernel

program pairs_f90
  use omp_lib
  use pairs_kernel
  implicit none
  integer(8), allocatable :: buf(:, :, :)
  integer(8) :: total
  integer :: rounds, nmax, pairs, t, n, h, p, m, lo, hi, r
  logical :: active
  character(len=32) :: arg

  rounds = 200
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     read (arg, *) rounds
  end if
  nmax = omp_get_max_threads()
  pairs = max(nmax / 2, 1)
  allocate (buf(words + pad, 2, pairs))
  total = 0

  !$omp parallel default(shared) private(t, n, h, p, m, lo, hi, r, active) reduction(+:total)
  t = omp_get_thread_num()
  n = omp_get_num_threads()
  h = n / 2
  active = h > 0 .and. t < 2 * h
  p = 1
  m = 0
  if (active) then
     p = mod(t, h) + 1
     m = t / h
  end if
  lo = m * (words / 2) + 1
  hi = lo + words / 2 - 1
  if (active) call first_touch(buf(:, :, p), lo, hi)
  !$omp barrier
  do r = 1, rounds
     if (active) call step(buf(:, :, p), lo, hi, mod(r + 1, 2) + 1, mod(r, 2) + 1, r)
     !$omp barrier
  end do
  if (active) total = total + half_sum(buf(:, :, p), lo, hi, mod(rounds, 2) + 1)
  !$omp end parallel

  print '(a, i0)', 'checksum: ', total
  deallocate (buf)
end program pairs_f90
