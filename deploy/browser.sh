#!/usr/bin/env bash
# Makes sure a headless browser is here for the viewer's tests (tests/viewer/):
# Debian's `chromium` and `chromium-driver` (chromedriver, which the tests drive over
# its W3C WebDriver HTTP interface; no Selenium, no Python). As root, a missing one is
# installed with apt-get; otherwise the script says what to run.
#
# Usage: eval "$(bash deploy/browser.sh)"
#   stdout: `export SOLARIA_TEST_CHROMEDRIVER=…` and `export SOLARIA_TEST_CHROMIUM=…`
#           (deploy/test.sh evaluates them; the tests read them); progress on stderr.
#
# When the browser cannot be had, CI (CI set) fails here; elsewhere the script says
# so, prints no variable, and the browser tests skip with a message.
set -euo pipefail

say() { printf 'browser: %s\n' "$*" >&2; }

find_both() {
    chromium="$(command -v chromium || true)"
    chromedriver="$(command -v chromedriver || true)"
    [ -n "$chromium" ] && [ -n "$chromedriver" ]
}

if ! find_both; then
    cmd="apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver"
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        say "installing Chromium and its driver ($cmd)"
        export DEBIAN_FRONTEND=noninteractive
        if ! { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2; }; then
            say "apt-get could not install chromium and chromium-driver"
        fi
    else
        say "chromium and chromedriver are missing: install them as root: sudo sh -c '$cmd'"
    fi
fi

if ! find_both; then
    if [ -n "${CI:-}" ]; then
        say "the browser tests are part of CI: failing (see above)"
        exit 1
    fi
    say "the browser tests will be skipped; CI would fail here"
    exit 0
fi
say "$("$chromium" --version 2>/dev/null || echo chromium), $("$chromedriver" --version 2>/dev/null | cut -d' ' -f1-2)"
printf 'export SOLARIA_TEST_CHROMEDRIVER=%q\n' "$chromedriver"
printf 'export SOLARIA_TEST_CHROMIUM=%q\n' "$chromium"
