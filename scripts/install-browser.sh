#!/usr/bin/env bash
# Installs what the browser test (tests/browser.rs) needs, from Debian's packages, when missing:
# Chromium (headless, driven over the DevTools protocol), poppler-utils (pdftotext) and a CJK
# font (WenQuanYi Micro Hei) so a Chinese memo prints as Chinese text, with fontconfig, whose
# `fc-list :lang=zh` is how this script and the test tell that a CJK font is there.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pdftotext >/dev/null || missing+=(poppler-utils)
command -v fc-list >/dev/null || missing+=(fontconfig)
if ! fc-list :lang=zh 2>/dev/null | grep -q .; then missing+=(fonts-wqy-microhei); fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "installing ${missing[*]} for the browser test"
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
# A clean machine may have no package lists yet; try the install first, update only if needed.
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
