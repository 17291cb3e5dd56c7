/* SPDX-License-Identifier: GPL-2.0 */
/*
 * liblrb only: persistent channels in files mapped MAP_SHARED, which a
 * process that dies leaves behind with its last records (lib/region_user.c).
 */
#ifndef _LRB_REGION_FILE_H
#define _LRB_REGION_FILE_H

#include <lrb/lrb.h>
#include <lrb/region.h>

#ifdef __cplusplus
extern "C" {
#endif

int lrb_region_file_create(const char *path, const struct lrb_config *cfg,
			   struct lrb_chan_attr *attr, struct lrb_chan **chanp);
void lrb_region_file_destroy(struct lrb_chan *chan);
int lrb_region_file_recover(const char *path, const struct lrb_decoder *dec,
			    struct lrb_recovery **recp, const char **why);
void lrb_region_file_release(struct lrb_recovery *rec);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_REGION_FILE_H */
