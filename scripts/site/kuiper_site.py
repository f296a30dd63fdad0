"""Sphinx extension of the course site (scripts/site.sh).

- `site:<lang>/<page>.html` links (prepare.py writes them for the other language) become
  relative links, so the site works from any base URL and from file://.
- Inline code that names a class of the engine's public headers (`Tensor`,
  `RuntimeGraph::Build`, `Layer`) links to its page of the Doxygen API reference, read
  from Doxygen's tag file (config value kuiper_api_tagfile).
- Every page's template gets `lang_switch_url` (the same page in the other language) and
  `api_url`.
- Chinese search: jieba's words (when python3-jieba is installed) plus every pair of
  adjacent Han characters, and a JavaScript query splitter that cuts Han runs into the
  same pairs. A query such as 拓扑排序, which jieba cuts into 拓扑 + 排序 in the text, then
  matches: every pair of the query must occur in the page.
"""

import logging
import re
import xml.etree.ElementTree as ET

from docutils import nodes
import sphinx.search
from sphinx.search.zh import SearchChinese

HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
# `Tensor`, `Tensor<float>`, `kuiper::Tensor`, `Tensor::Padding`, `Tensor::Padding(pads, v)`.
CODE_NAME = re.compile(r"^(?:kuiper::)?((?:pnnx::)?[A-Z]\w*)(?:<[^>]*>)?(?:::(\w+))?(?:\(.*\))?$")


class KuiperChinese(SearchChinese):
    js_splitter_code = r"""
var splitQuery = function(query) {
  var terms = [];
  query.split(/[^\p{Letter}\p{Number}_]+/u).forEach(function(run) {
    (run.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu) || []).forEach(function(part) {
      if (!/\p{Script=Han}/u.test(part)) { terms.push(part); return; }
      if (part.length === 1) { terms.push(part); return; }
      for (var i = 0; i + 1 - part.length; i++) terms.push(part.substr(i, 2));
    });
  });
  return terms;
};
"""

    def split(self, input):
        words = super().split(input)
        for run in HAN_RUN.findall(input):
            words.extend(run[i:i + 2] for i in range(len(run) - 1))
        return words


def read_tagfile(path):
    """{'Tensor': 'classkuiper_1_1Tensor_3_01float_01_4.html', 'Tensor::Padding': 'x.html#anchor'}."""
    api = {}
    if not path:
        return api
    root = ET.parse(path).getroot()
    for compound in root.iter("compound"):
        if compound.get("kind") not in ("class", "struct"):
            continue
        full = compound.findtext("name") or ""
        if not full.startswith("kuiper::"):
            continue
        name = re.sub(r"\s*<.*>$", "", full[len("kuiper::"):])
        filename = compound.findtext("filename") or ""
        if not filename.endswith(".html"):
            filename += ".html"
        # Tensor<float> (the specialisation every lab uses) wins over the declared template.
        if "<" in full:
            api[name] = filename
        else:
            api.setdefault(name, filename)
        for member in compound.findall("member"):
            mname, anchor = member.findtext("name"), member.findtext("anchor")
            afile = member.findtext("anchorfile") or filename
            if mname and anchor:
                api.setdefault(f"{name}::{mname}", f"{afile}#{anchor}")
    return api


def up(docname):
    """The relative path from a page to the site's root (build/site/)."""
    return "../" * (docname.count("/") + 1)


def on_builder_inited(app):
    app.env.kuiper_api = read_tagfile(app.config.kuiper_api_tagfile)


def on_doctree_resolved(app, doctree, docname):
    root = up(docname)
    for ref in list(doctree.findall(nodes.reference)):
        uri = ref.get("refuri", "")
        if uri.startswith("site:"):
            ref["refuri"] = root + uri[len("site:"):]
            ref["classes"].append("lang-switch")
    api = getattr(app.env, "kuiper_api", {})
    if not api:
        return
    for lit in list(doctree.findall(nodes.literal)):
        if isinstance(lit.parent, nodes.reference) or isinstance(lit, nodes.literal_block):
            continue
        m = CODE_NAME.match(lit.astext().strip())
        if not m:
            continue
        target = api.get(f"{m.group(1)}::{m.group(2)}") if m.group(2) else None
        target = target or api.get(m.group(1))
        if not target:
            continue
        ref = nodes.reference("", "", internal=False, refuri=root + "api/" + target,
                              classes=["api-link"])
        lit.replace_self(ref)
        ref.append(lit)


def on_page_context(app, pagename, templatename, context, doctree):
    other = "zh" if app.config.kuiper_site_lang == "en" else "en"
    root = up(pagename)
    context["lang_switch_url"] = f"{root}{other}/{pagename}.html"
    context["lang_switch_label"] = "中文" if other == "zh" else "English"
    context["api_url"] = root + "api/index.html"
    context["site_lang"] = app.config.kuiper_site_lang


def setup(app):
    try:
        import jieba
        jieba.setLogLevel(logging.WARNING)
    except ImportError:
        pass
    sphinx.search.languages["zh"] = KuiperChinese
    sphinx.search.languages["zh_CN"] = KuiperChinese
    app.add_config_value("kuiper_api_tagfile", "", "env")
    app.add_config_value("kuiper_site_lang", "en", "env")
    app.connect("builder-inited", on_builder_inited)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("html-page-context", on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
