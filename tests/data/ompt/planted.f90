! The Fortran variant of planted.c: thread 0 sleeps before an explicit barrier, 3 regions.
program planted
  use omp_lib
  implicit none
  integer :: r, seen
  seen = 0
  do r = 1, 3
!$omp parallel shared(seen)
     if (omp_get_thread_num() == 0) call sleep_ms(200)
!$omp barrier
!$omp atomic
     seen = seen + 1
!$omp end parallel
  end do
  if (seen == 3 * omp_get_max_threads()) then
     print '(a)', 'validation: OK'
  else
     print '(a)', 'validation: FAILED'
     stop 1
  end if
contains
  subroutine sleep_ms(ms)
    integer, intent(in) :: ms
    integer(8) :: start, now, rate
    call system_clock(start, rate)
    do
       call system_clock(now)
       if ((now - start) * 1000 >= ms * rate) exit
    end do
  end subroutine sleep_ms
end program planted
