#!/usr/bin/env bash
# Installs what the browser test (tests/browser.rs) needs, from Debian's packages, when missing:
# Chromium (headless, driven over the DevTools protocol), poppler-utils (pdftotext) and the fonts
# the test pins: the font files tests/browser/fonts.conf names, from fonts-dejavu-core (DejaVu
# Sans, Serif and Sans Mono; Sans Mono is fonts-dejavu-mono on Debian 13) and fonts-wqy-microhei
# (WenQuanYi Micro Hei, so a Chinese memo prints as Chinese text). Every Chromium the test starts
# reads that file (FONTCONFIG_FILE) and sees those fonts and no other, so pages measure the same
# whatever else the machine has.
set -euo pipefail
conf="$(dirname "$0")/../tests/browser/fonts.conf"
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pdftotext >/dev/null || missing+=(poppler-utils)
# Each pinned file (a glob that is a path, in fonts.conf) that is missing, by the package that
# brings it.
fonts=$(sed -n 's|^ *<glob>\(/[^<]*\)</glob>.*|\1|p' "$conf")
if [ -z "$fonts" ]; then
    echo "no font file pinned in $conf" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
for font in $fonts; do
    [ -f "$font" ] && continue
    # A clean machine may have no package lists yet: they say which packages there are.
    apt-cache show fonts-wqy-microhei >/dev/null 2>&1 || "${sudo[@]}" apt-get update
    case $font in
        # Debian 13 moved DejaVu Sans Mono out of fonts-dejavu-core (which only recommends it).
        /usr/share/fonts/truetype/dejavu/DejaVuSansMono*)
            if apt-cache show fonts-dejavu-mono >/dev/null 2>&1; then
                package=fonts-dejavu-mono
            else
                package=fonts-dejavu-core
            fi
            ;;
        /usr/share/fonts/truetype/dejavu/*) package=fonts-dejavu-core ;;
        /usr/share/fonts/truetype/wqy/*) package=fonts-wqy-microhei ;;
        *) echo "no Debian package known for $font (pinned in $conf)" >&2; exit 1 ;;
    esac
    case " ${missing[*]-} " in *" $package "*) ;; *) missing+=("$package") ;; esac
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "installing ${missing[*]} for the browser test"
# A clean machine may have no package lists yet; try the install first, update only if needed.
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
for font in $fonts; do
    if [ ! -f "$font" ]; then
        echo "$font is still missing after installing ${missing[*]}" >&2
        exit 1
    fi
done
