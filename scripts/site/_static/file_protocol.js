// Opened from disk (file://), the browser refuses the fetch() with which Sphinx's search
// shows a summary of each result: list the results without summaries instead.
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
