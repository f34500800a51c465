// web/static/live.js - UNFINISHED: the daemon's stream command that feeds
// this page is not built yet (issue 18, piece 4); the page says so.
'use strict';
document.getElementById('state').textContent =
  'not available yet: the daemon has no stream command (issue 18, unfinished)';
