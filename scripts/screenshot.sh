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
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
app=
cleanup() {
    [ -n "$app" ] && kill "$app" 2>/dev/null || true
    kill "$xvfb" 2>/dev/null || true
}
trap cleanup EXIT
export DISPLAY=$display
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
sleep 0.5
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
