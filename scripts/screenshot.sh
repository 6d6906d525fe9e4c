#!/usr/bin/env bash
# Starts the real viewer under Xvfb, waits for its window and for the data to load, and saves a
# screenshot of the screen. Fails if the viewer has exited by then.
#   scripts/screenshot.sh OUT.png [topoview arguments...]
# Needs: Xvfb, xwininfo (x11-utils), import (imagemagick), a Vulkan driver (mesa's lavapipe).
# SETTLE (seconds, default 5) is how long to wait after the window appears.
set -euo pipefail
out=$1
shift
bin=${TOPOVIEW_BIN:-target/release/topoview}
# Xvfb picks a free display itself and writes its number to -displayfd only once it accepts
# connections: a fixed display may be taken, and a fixed sleep lost the race on a loaded CI machine.
displayfile=$(mktemp)
Xvfb -displayfd 3 -screen 0 1400x900x24 -nolisten tcp 3>"$displayfile" >/dev/null 2>&1 &
xvfb=$!
app=
cleanup() {
    [ -n "$app" ] && kill "$app" 2>/dev/null || true
    kill "$xvfb" 2>/dev/null || true
    rm -f "$displayfile"
}
trap cleanup EXIT
for _ in $(seq 300); do
    [ -s "$displayfile" ] && break
    kill -0 "$xvfb" 2>/dev/null || { echo "screenshot.sh: Xvfb did not start" >&2; exit 1; }
    sleep 0.1
done
[ -s "$displayfile" ] || { echo "screenshot.sh: Xvfb gave no display in 30 s" >&2; exit 1; }
export DISPLAY=":$(head -n1 "$displayfile")"
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
"$bin" "$@" &
app=$!
for _ in $(seq 200); do
    # The title is "topoview", then "FILE - topoview" once a field is on screen.
    xwininfo -root -tree 2>/dev/null | grep -q 'topoview"' && break
    kill -0 "$app" 2>/dev/null || { echo "screenshot.sh: topoview exited before showing a window" >&2; exit 1; }
    sleep 0.1
done
sleep "${SETTLE:-5}"
kill -0 "$app" 2>/dev/null || { echo "screenshot.sh: topoview exited" >&2; exit 1; }
import -window root "$out"
echo "screenshot.sh: wrote $out"
