#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --max-size 32k --max-files 3 records the driver sample in
# packets of 8 KiB: each CPU's stream is cut into files of at most four
# packets and only the newest three files are kept; the host side
# (77-record-max-files.host.sh) reads each file alone with babeltrace2 and
# checks that the records left are exactly the newest ones.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"
SAMPLE_PARAMS="subbuf_size=8192 num_subbuf=64" \
	record_driver 3 -o "$LRB_EXPORT/trace" --max-size 32k --max-files 3
finish
