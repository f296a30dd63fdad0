# Sphinx configuration of the course site, shared by both languages (scripts/site.sh runs
# sphinx-build -c scripts/site with KUIPER_SITE_LANG=en or zh and KUIPER_API_TAGFILE).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

kuiper_site_lang = os.environ.get("KUIPER_SITE_LANG", "en")
kuiper_api_tagfile = os.environ.get("KUIPER_API_TAGFILE", "")

project = "KuiperCourse"
copyright = "KuiperCourse authors"
language = "zh_CN" if kuiper_site_lang == "zh" else "en"
extensions = ["myst_parser", "kuiper_site"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["pages.json"]

# GitHub-style anchors, so that a handout's `README.md#how-fast` link finds its section.
myst_heading_anchors = 3
# `site:` marks the links to the other language (kuiper_site makes them relative).
myst_url_schemes = ["http", "https", "mailto", "site"]

# alabaster ships with Sphinx and loads nothing from another host: system fonts, no
# analytics, no buttons (its GitHub button appears only when github_user is set).
html_theme = "alabaster"
html_theme_options = {
    "show_powered_by": False,
    "sidebar_collapse": True,
    "font_family": "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', sans-serif",
    "head_font_family": "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', sans-serif",
    "code_font_family": "'DejaVu Sans Mono', Consolas, monospace",
    "page_width": "1100px",
}
html_title = "KuiperCourse"
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["kuiper.css"]
html_sidebars = {"**": ["langswitch.html", "navigation.html", "searchbox.html"]}
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
suppress_warnings = ["myst.header"]
# Named by every page, so that browsers do not ask the host for /favicon.ico.
html_favicon = "_static/favicon.svg"
# From file:// the search lists its results without the summaries it cannot fetch.
html_js_files = ["file_protocol.js"]
