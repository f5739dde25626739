#!/bin/sh
# Regenerates the media fixtures in test/fixtures/media/ with real tools, so the tests read files
# as ffmpeg, ImageMagick and exiftool write them (CI uses the committed copies and needs none of
# these tools). Debian: apt-get install -y ffmpeg imagemagick libimage-exiftool-perl
set -eu
out="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/media"
mkdir -p "$out"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }

# Playable H.264 MP4 with its index (moov) after the data, as ffmpeg writes by default: a
# player has to seek to the end and back, which is what range requests on a random URL break.
ff -f lavfi -i testsrc=size=320x180:rate=10 -t 3 -c:v libx264 -preset veryslow -crf 45 -pix_fmt yuv420p "$out/wide.mp4"
# The same picture upright: a phone's quarter-turn rotation in the track matrix (ffmpeg 5 writes
# the rotate tag into the matrix on a stream copy only).
ff -i "$out/wide.mp4" -c copy -metadata:s:v:0 rotate=90 "$out/upright.mp4"
# VP8 WebM stored 640x360 and shown as 9:16 (DisplayWidth/DisplayHeight): portrait.
ff -f lavfi -i testsrc=size=640x360:rate=5 -t 1 -c:v libvpx -b:v 40k -aspect 9:16 "$out/shown-tall.webm"
# A PNG named .jpg (ImageMagick), and a JPEG named .png.
convert -size 60x40 gradient:red-blue "png:$out/png-named.jpg"
convert -size 40x60 gradient:green-yellow "jpg:$out/jpeg-named.png"
# A JPEG stored landscape with EXIF orientation 6 (exiftool): displayed portrait.
convert -size 80x50 gradient:white-black "$out/turned.jpg"
exiftool -q -overwrite_original -Orientation#=6 "$out/turned.jpg"
# An MP4 named .jpg: a video where an image is expected.
cp "$out/wide.mp4" "$out/video-named.jpg"
ls -l "$out"
