# perf/step-results.sh — sourced by perf/bench: a step that measured nothing, and the last run's figures.
# A step run again (--step) replaces its figures only with figures: when it measures nothing (its programs did not
# build, the guest did not boot, an offline machine without mimalloc-bench's source) its files, its cuts and its row
# of the run-time table stay the last run's, and perf/bench says so. In a whole run there is nothing to keep: the
# step's files are left out and the report says "not measured".
#   results_set_aside RESULTS [STEPS]   before the steps; STEPS: the --step names (empty: a whole run). With
#                                       STEPS, a copy of RESULTS as it is (RESULTS.last), until results_done
#   results_unmeasured STEP FILE...     STEP measured nothing; FILE...: its result files, names inside RESULTS.
#                                       Sets results_kept=1 when the last run's files are back, else 0
#   results_step_cuts STEP [FROM]       cuts.csv without STEP's rows, and with FROM's rows of STEP when given
#   results_done                        the copy goes

results_set_aside() {
  results_dir=$1 results_last="$1.last" results_steps=${2:-} results_kept=0
  rm -rf "$results_last"
  if [ -n "$results_steps" ]; then cp -a "$results_dir" "$results_last"; fi
}

results_unmeasured() {
  local step=$1 f rows
  shift
  results_kept=0
  for f in "$@"; do rm -f "$results_dir/$f"; done
  [ -n "$results_steps" ] || return 0
  for f in "$@"; do
    if [ -e "$results_last/$f" ]; then cp -a "$results_last/$f" "$results_dir/$f"; results_kept=1; fi
  done
  [ "$results_kept" = 1 ] || return 0
  results_step_cuts "$step" "$results_last/cuts.csv"          # its cuts as the last run made them
}

results_step_cuts() {
  local step=$1 from=${2:-} rows
  # cuts.csv rows start with the step's name (the JMH suite and collect.sh write them so)
  rows=$( { grep -v "^$step," "$results_dir/cuts.csv" 2>/dev/null; [ -z "$from" ] || grep "^$step," "$from" 2>/dev/null; } || true)
  if [ -n "$rows" ] || [ -e "$results_dir/cuts.csv" ]; then printf '%s' "${rows:+$rows
}" > "$results_dir/cuts.csv"; fi
}

results_done() {
  rm -rf "$results_last"
}
