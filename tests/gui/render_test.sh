#!/bin/sh
# One headless render test: run the dashboard for a few frames on a database, require exit 0,
# a PNG with real content, and (optionally) a given line on stderr. Run under xvfb-run by ctest.
# usage: render_test.sh GUI_EXE PNG_CHECK DB PNG TAB EXPECT_STDERR [png-check options...]
# GDN_GUI_ARGS (environment, split on spaces): more options for the dashboard.
set -eu
gui="$1"; check="$2"; db="$3"; png="$4"; tab="$5"; expect="$6"
shift 6
rm -f "$png"
err="$png.stderr"
# shellcheck disable=SC2086  # GDN_GUI_ARGS is split into options on purpose
"$gui" --db "$db" --screenshot "$png" --frames 6 --tab "$tab" --size 1600x1000 --frame-stats ${GDN_GUI_ARGS:-} 2>"$err" || {
  echo "render_test: gdnlab-gui exited with $?"; cat "$err"; exit 1; }
cat "$err"
if [ -n "$expect" ] && ! grep -q "$expect" "$err"; then
  echo "render_test: stderr does not contain: $expect"; exit 1
fi
"$check" "$png" --width 1600 --height 1000 "$@"
