# Runtime options of the sanitizers for the tests (sourced by scripts/sanitize.sh; source it
# before running a sanitized test by hand). Every finding stops the program with a stack trace.
_rewind_sanitizers_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=${_rewind_sanitizers_dir}/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=${_rewind_sanitizers_dir}/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=${_rewind_sanitizers_dir}/tsan.supp"
unset _rewind_sanitizers_dir
