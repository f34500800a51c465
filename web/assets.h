/* web/assets.h - the files the browser gets besides the pages: the
 * front-end code (web/static/) and uPlot (web/vendor/uplot/, from npm,
 * pinned), compiled into the binary by web/embed.sh so that the server
 * never reads a file but the database and works offline. */
#ifndef PL_WEB_ASSETS_H
#define PL_WEB_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *name;           /* "uPlot.iife.min.js": the URL is /static/NAME */
    const char *mime;
    const unsigned char *data;
    size_t size;
} pl_web_asset;

/* The asset called name, or NULL. */
const pl_web_asset *pl_web_asset_find(const char *name);

#endif
