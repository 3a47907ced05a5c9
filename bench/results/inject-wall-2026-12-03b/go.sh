#!/bin/bash
# The same measurement as ../inject-wall-2026-12-03/go.sh, run again on
# the library and tool of 2026-12-03 evening (lib.txt, e2e.txt here).
exec bash "$(dirname "$0")/../inject-wall-2026-12-03/go.sh" "$@"
