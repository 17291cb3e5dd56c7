#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lrb-record --max-size 32k --max-files 3 records the driver sample in
# packets of 8 KiB, once with each consumer: each CPU's stream is cut into
# files of at most four packets and only the newest three files are kept;
# the host side (77-record-max-files.host.sh) reads each file alone with
# babeltrace2 and checks that the records left are exactly the newest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record.sh"
for cons in splice read mmap; do
	SAMPLE_PARAMS="subbuf_size=8192 num_subbuf=64" \
		record_driver 3 -o "$LRB_EXPORT/$cons/trace" --consumer "$cons" \
		--max-size 32k --max-files 3
	mv "$LRB_EXPORT/written" "$LRB_EXPORT/lrb-record.err" "$LRB_EXPORT/$cons/"
	check "rmmod lrb after the $cons recording" rmmod lrb
done
finish
