#!/usr/bin/python3
"""Writes the handouts' SVG figures from the engine's own data.

    /usr/bin/python3 tools/make_figures.py                 # rewrite the committed figures
    /usr/bin/python3 tools/make_figures.py --check         # compare; exit 1 naming those differing
    /usr/bin/python3 tools/make_figures.py --out DIR       # write them under DIR instead
    ... --kuiper build/solutions/bin/kuiper                # the CLI for the two graph figures
    ... --skip-kuiper                                      # leave the two graph figures out

The drawings are plain SVG written by this script (no plotting library: the
bytes depend only on this file and its inputs, not on a library's version).
Their content comes from the repository: the PNNX line and the Kahn graph from
committed fixtures, the registry from the layers' registration lines, the
expression's tokens and reverse Polish order from a reimplementation of the
parser's rules that is checked against what course7's tests assert. The two
graph figures are `kuiper graph MODEL --dot` (the engine's ReverseTopo order)
laid out by Graphviz `dot`. See docs/figures.md.
"""

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "models", "fixtures")

MONO = "DejaVu Sans Mono,Menlo,Consolas,monospace"
SANS = "DejaVu Sans,Helvetica,Arial,sans-serif"
CHAR_W = 0.6  # width of a monospace character, in font sizes

# A light palette that stays readable with dark text, and its darker strokes.
BLUE, BLUE_D = "#dbe9f6", "#3b6ea5"
ORANGE, ORANGE_D = "#fde3c8", "#c0661b"
GREEN, GREEN_D = "#dcefd9", "#3f8a3a"
PURPLE, PURPLE_D = "#e8def3", "#7450a0"
RED, RED_D = "#f7d7d5", "#b23a33"
GREY, GREY_D = "#eeeeee", "#777777"
YELLOW = "#fff4c2"
INK = "#222222"


def esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def num(value):
    """A coordinate with at most one decimal, so the files stay short and stable."""
    value = round(float(value), 1)
    return str(int(value)) if value == int(value) else f"{value:.1f}"


class Svg:
    """The few SVG elements the figures need, written in a fixed order."""

    def __init__(self, width, height, title):
        self.width, self.height, self.title = width, height, title
        self.items = []

    def rect(self, x, y, w, h, fill="#ffffff", stroke=INK, width=1, rx=0, dash=None):
        extra = f' rx="{num(rx)}"' if rx else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(
            f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{num(width)}"{extra}/>')

    def text(self, x, y, text, size=12, anchor="middle", mono=False, bold=False, fill=INK,
             italic=False, halo=False):
        style = "m" if mono else "s"
        extra = ' font-weight="bold"' if bold else ""
        # A white outline under the letters keeps them readable over a line.
        extra += ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
        extra += ' font-style="italic"' if italic else ""
        extra += f' fill="{fill}"' if fill != INK else ""
        self.items.append(
            f'<text class="{style}" x="{num(x)}" y="{num(y)}" font-size="{num(size)}" '
            f'text-anchor="{anchor}"{extra}>{esc(text)}</text>')

    def line(self, x1, y1, x2, y2, stroke=INK, width=1, arrow=False, dash=None):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
            f'stroke="{stroke}" stroke-width="{num(width)}"{extra}/>')

    def polyline(self, points, stroke=INK, width=1, arrow=False):
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        coords = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        self.items.append(f'<polyline points="{coords}" fill="none" stroke="{stroke}" '
                          f'stroke-width="{num(width)}"{extra}/>')

    def lines(self, x, y, texts, size=11, leading=18):
        """Centred lines of text, one below the other, the first at y."""
        for k, text in enumerate(texts):
            self.text(x, y + k * leading, text, size)

    def render(self):
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(self.width)}" '
                f'height="{num(self.height)}" viewBox="0 0 {num(self.width)} {num(self.height)}">\n'
                f'<title>{esc(self.title)}</title>\n'
                f'<style>.m{{font-family:{MONO}}} .s{{font-family:{SANS}}}</style>\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                f'fill="{INK}"/></marker></defs>\n'
                f'<rect width="100%" height="100%" fill="#ffffff"/>\n')
        return head + "\n".join(self.items) + "\n</svg>\n"


def text_width(text, size):
    return len(text) * CHAR_W * size


# ---------------------------------------------------------------- course 1 --
def fcube_layout():
    """An arma::fcube of 2 rows x 3 cols x 2 channels: where each element lives."""
    rows, cols, chans = 2, 3, 2
    cw, ch = 50, 48
    svg = Svg(820, 520, "arma::fcube memory order vs PyTorch's (C, H, W) order")
    svg.text(410, 26, "One tensor of 2 channels x 2 rows x 3 cols, two memory orders", 16,
             bold=True)
    svg.text(410, 46, "the big number in a cell is its offset in memory; (c,r,k) = channel, "
             "row, col", 12)

    def grids(x0, y0, offset, heading, formula, fill, stroke):
        svg.text(x0 + 170, y0, heading, 13, bold=True)
        svg.text(x0 + 170, y0 + 18, formula, 12, mono=True)
        for c in range(chans):
            gx = x0 + c * (cols * cw + 40)
            gy = y0 + 48
            svg.text(gx + cols * cw / 2, gy - 8, f"channel {c}", 11)
            order = []
            for r in range(rows):
                for k in range(cols):
                    order.append((offset(c, r, k), gx + k * cw + cw / 2, gy + r * ch + ch / 2))
                    svg.rect(gx + k * cw, gy + r * ch, cw, ch, fill, stroke)
            order.sort()
            # The walk through memory, under the numbers.
            svg.polyline([(x, y + 4) for _, x, y in order], stroke, 1.5, arrow=True)
            for o, x, y in order:
                r, k = (y - gy - ch / 2) / ch, (x - gx - cw / 2) / cw
                svg.text(x, y - 4, o, 15, bold=True, halo=True)
                svg.text(x, y + 18, f"({c},{int(r)},{int(k)})", 9, mono=True, fill=GREY_D)

    grids(30, 80, lambda c, r, k: c * rows * cols + k * rows + r,
          "arma::fcube q(2, 3, 2) in this engine", "offset = c*rows*cols + k*rows + r", BLUE,
          BLUE_D)
    grids(440, 80, lambda c, r, k: c * rows * cols + r * cols + k,
          "PyTorch / NumPy / PNNX (C, H, W)", "offset = c*rows*cols + r*cols + k", ORANGE,
          ORANGE_D)
    svg.text(205, 258, "each channel (slice) is a column-major matrix: down a column first", 11)
    svg.text(615, 258, "row-major: along a row first", 11)

    def strip(y, heading, fill, stroke, coord):
        svg.text(30, y - 10, heading, 13, anchor="start", bold=True)
        for o in range(rows * cols * chans):
            x = 30 + o * 63
            svg.rect(x, y, 63, 40, fill, stroke)
            svg.text(x + 31.5, y + 16, o, 12, bold=True)
            svg.text(x + 31.5, y + 32, coord(o), 10, mono=True)

    def arma_coord(o):
        c, rest = divmod(o, rows * cols)
        k, r = divmod(rest, rows)
        return f"({c},{r},{k})"

    def torch_coord(o):
        c, rest = divmod(o, rows * cols)
        r, k = divmod(rest, cols)
        return f"({c},{r},{k})"

    strip(310, "fcube memory, offsets 0..11: which (c,r,k) each holds  (q.memptr(), "
          "Tensor::index(offset))", BLUE, BLUE_D, arma_coord)
    strip(390, "PyTorch memory, offsets 0..11 (weights and .npy files arrive in this order)",
          ORANGE, ORANGE_D, torch_coord)
    svg.text(410, 465, "Tensor::Fill(values, row_major=true) and values(true) convert between "
             "the two;", 12)
    svg.text(410, 485, "a slice (one channel) is a contiguous arma::fmat in both orders: only "
             "the order inside it differs.", 12)
    return svg.render()


# ---------------------------------------------------------------- course 2 --
def flatten_orders():
    """A (2, 2, 3) tensor holding 0..11 in PyTorch order, flattened both ways."""
    chans, rows, cols = 2, 2, 3
    cw, ch = 40, 34
    svg = Svg(820, 360, "Tensor::Flatten: row-major vs column-major")
    svg.text(410, 26, "Flatten a 2 x 2 x 3 tensor (channels x rows x cols) to 1-D", 16, bold=True)
    svg.text(410, 46, "cell value = its row-major position, as torch.arange(12).reshape(2, 2, 3)",
             12)
    fills = [(BLUE, BLUE_D), (GREEN, GREEN_D)]

    def panel(y0, heading, row_major, colour):
        svg.text(20, y0, heading, 13, anchor="start", bold=True)
        order = []
        for c in range(chans):
            gx, gy = 30 + c * (cols * cw + 30), y0 + 30
            svg.text(gx + cols * cw / 2, gy - 6, f"channel {c}", 11)
            for r in range(rows):
                for k in range(cols):
                    value = c * rows * cols + r * cols + k
                    key = (c, r, k) if row_major else (c, k, r)
                    order.append((key, value, gx + k * cw + cw / 2, gy + r * ch + ch / 2))
                    svg.rect(gx + k * cw, gy + r * ch, cw, ch, *fills[c])
        order.sort()
        for c in range(chans):  # the walk, under the numbers, its arrow before the last one
            points = [(x, y) for key, _, x, y in order if key[0] == c]
            (x1, y1), (x2, y2) = points[-2], points[-1]
            length = ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
            points[-1] = (x2 - (x2 - x1) * 12 / length, y2 - (y2 - y1) * 12 / length)
            svg.polyline(points, colour, 1.5, arrow=True)
        for _, value, x, y in order:
            svg.text(x, y + 5, value, 15, bold=True, halo=True)
        sx, sy = 330, y0 + 47
        svg.text(sx, sy - 14, "the 1-D result, element 0 first:", 11, anchor="start")
        for i, (key, value, _, _) in enumerate(order):
            svg.rect(sx + i * 38, sy, 38, 32, *fills[key[0]])
            svg.text(sx + i * 38 + 19, sy + 21, value, 14, bold=True)
            svg.text(sx + i * 38 + 19, sy + 46, i, 9, fill=GREY_D)
        return [value for _, value, _, _ in order]

    panel(80, "Flatten(true): row-major (C, H, W), as torch.flatten", True, RED_D)
    panel(215, "Flatten(false): column-major, the fcube's storage order", False, PURPLE_D)
    svg.text(410, 346, "Both keep the channels in order; inside a channel, row-major walks "
             "along rows, column-major down columns.", 12)
    return svg.render()


def padding():
    """Tensor::Padding({top, bottom, left, right}, value) on one 3 x 4 channel."""
    rows, cols = 3, 4
    top, bottom, left, right = 1, 2, 2, 1
    cw, ch = 44, 34
    new_rows, new_cols = rows + top + bottom, cols + left + right
    svg = Svg(720, 420, "Tensor::Padding with its four sides")
    svg.text(360, 26, "t.Padding({1, 2, 2, 1}, 0.f)   // pads = {top, bottom, left, right}", 15,
             mono=True, bold=True)
    svg.text(360, 46, f"every channel grows from {rows} x {cols} to "
             f"{new_rows} x {new_cols} (rows x cols); the padding cells hold the value 0", 12)
    x0, y0 = 160, 80
    sides = {"top": (BLUE, BLUE_D), "bottom": (GREEN, GREEN_D), "left": (ORANGE, ORANGE_D),
             "right": (PURPLE, PURPLE_D)}
    for r in range(new_rows):
        for k in range(new_cols):
            x, y = x0 + k * cw, y0 + r * ch
            if r < top:
                fill, stroke = sides["top"]
            elif r >= top + rows:
                fill, stroke = sides["bottom"]
            elif k < left:
                fill, stroke = sides["left"]
            elif k >= left + cols:
                fill, stroke = sides["right"]
            else:
                value = (r - top) * cols + (k - left) + 1
                svg.rect(x, y, cw, ch, "#ffffff", INK, 1.5)
                svg.text(x + cw / 2, y + 22, value, 14, bold=True)
                continue
            svg.rect(x, y, cw, ch, fill, stroke)
            svg.text(x + cw / 2, y + 22, 0, 13, fill=stroke)
    # The original block's outline.
    svg.rect(x0 + left * cw, y0 + top * ch, cols * cw, rows * ch, "none", INK, 2.5)

    def brace_v(x, y1, y2, label, colour, anchor):
        svg.line(x, y1 + 2, x, y2 - 2, colour, 2)
        svg.line(x - 5, y1 + 2, x + 5, y1 + 2, colour, 2)
        svg.line(x - 5, y2 - 2, x + 5, y2 - 2, colour, 2)
        dx = 10 if anchor == "start" else -10
        svg.text(x + dx, (y1 + y2) / 2 + 5, label, 13, anchor=anchor, bold=True, fill=colour)

    def brace_h(y, x1, x2, label, colour, below):
        svg.line(x1 + 2, y, x2 - 2, y, colour, 2)
        svg.line(x1 + 2, y - 5, x1 + 2, y + 5, colour, 2)
        svg.line(x2 - 2, y - 5, x2 - 2, y + 5, colour, 2)
        svg.text((x1 + x2) / 2, y + (18 if below else -8), label, 13, bold=True, fill=colour)

    right_x = x0 + new_cols * cw
    brace_v(right_x + 14, y0, y0 + top * ch, "top = 1 row", BLUE_D, "start")
    brace_v(right_x + 14, y0 + (top + rows) * ch, y0 + new_rows * ch, "bottom = 2 rows",
            GREEN_D, "start")
    brace_h(y0 + new_rows * ch + 14, x0, x0 + left * cw, "left = 2 cols", ORANGE_D, True)
    brace_h(y0 + new_rows * ch + 14, right_x - right * cw, right_x, "right = 1 col", PURPLE_D,
            True)
    brace_v(x0 - 14, y0 + top * ch, y0 + (top + rows) * ch, "original 3 x 4", INK, "end")
    svg.text(360, 370, "The original cells keep their values at rows top..top+rows-1, cols "
             "left..left+cols-1", 12)
    svg.text(360, 390, "(an arma::fcube subcube); the top and bottom rows span the whole new "
             "width, corners included.", 12)
    svg.text(360, 410, "MaxPool2d pads with -inf this way; the convolution's im2col reads "
             "padding as zeros instead.", 12)
    return svg.render()


# ---------------------------------------------------------------- course 3 --
def read_param(path):
    """(operators, operand producers) of a .pnnx.param: operators as dicts."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    operators = []
    for index, line in enumerate(lines[2:]):
        fields = line.split()
        n_in, n_out = int(fields[2]), int(fields[3])
        operators.append({
            "index": index, "type": fields[0], "name": fields[1], "line": line,
            "inputs": fields[4:4 + n_in], "outputs": fields[4 + n_in:4 + n_in + n_out],
            "rest": fields[4 + n_in + n_out:]})
    return operators


def pnnx_line():
    """The conv1 line of models/fixtures/tiny_net.pnnx.param, field by field."""
    ops = read_param(os.path.join(FIXTURES, "tiny_net.pnnx.param"))
    op = next(o for o in ops if o["name"] == "conv1")
    writer = next(o["name"] for o in ops if op["inputs"][0] in o["outputs"])
    reader = next(o["name"] for o in ops if op["outputs"][0] in o["inputs"])
    fields = op["line"].split()
    groups = [  # (tokens, label, what the engine makes of it, colours)
        ([fields[0]], "type", "RuntimeOperator::type: the layer registry's key", BLUE, BLUE_D),
        ([fields[1]], "name", "RuntimeOperator::name, unique", GREEN, GREEN_D),
        ([fields[2]], "inputs", "count of input operands", GREY, GREY_D),
        ([fields[3]], "outputs", "count of output operands", GREY, GREY_D),
        (op["inputs"], "input operands", "names of operands read", YELLOW, ORANGE_D),
        (op["outputs"], "output operands", "names of operands written", YELLOW, ORANGE_D),
    ]
    params = [t for t in op["rest"] if not t.startswith(("@", "#"))]
    attrs = [t for t in op["rest"] if t.startswith("@")]
    shapes = [t for t in op["rest"] if t.startswith("#")]
    groups.append((params, "key=value parameters",
                   "RuntimeOperator::params (course 3: InitGraphParams types them)", ORANGE,
                   ORANGE_D))
    groups.append((attrs, "@attributes: @name=(shape)type",
                   "RuntimeOperator::attribute; the bytes are in the .pnnx.bin zip", PURPLE,
                   PURPLE_D))
    groups.append((shapes, "#operand shapes: #name=(shape)type",
                   "RuntimeOperand::shapes and type (batch first)", RED, RED_D))

    size, pad, gap, width = 12, 6, 6, 1000
    # Lay the tokens out left to right, wrapping to a new row when full.
    x, row, boxes = 20, 0, []  # (x, row, w, text, group index)
    for g, (tokens, *_rest) in enumerate(groups):
        for token in tokens:
            w = text_width(token, size) + 2 * pad
            if x + w > width - 20:
                x, row = 20, row + 1
            boxes.append((x, row, w, token, g))
            x += w + gap
    row_h, top = 60, 84
    n_rows = row + 1
    legend_top = top + n_rows * row_h + 10
    svg = Svg(width, legend_top + 22 * len(groups) + 50, "A PNNX operator line, field by field")
    svg.text(width / 2, 26, "One operator line of models/fixtures/tiny_net.pnnx.param", 16,
             bold=True)
    svg.text(width / 2, 46, "fields are separated by spaces; the file lists one operator per "
             "line after the magic 7767517 and the counts line", 12)
    svg.text(width / 2, 64, "(the column padding of type and name is dropped here)", 11,
             fill=GREY_D)
    for x, row, w, token, g in boxes:
        y = top + row * row_h
        fill, stroke = groups[g][3:]
        svg.rect(x, y, w, 24, fill, stroke, 1.2, rx=3)
        svg.text(x + w / 2, y + 16.5, token, size, mono=True)
    # One bracket per group and row, numbered as in the legend; the label too
    # where it fits under the bracket.
    for g, (_, label, _, _, stroke) in enumerate(groups):
        for r in range(n_rows):
            mine = [b for b in boxes if b[4] == g and b[1] == r]
            if not mine:
                continue
            x1, x2 = mine[0][0], mine[-1][0] + mine[-1][2]
            y = top + r * row_h + 32
            svg.line(x1, y, x2, y, stroke, 2)
            svg.line(x1, y - 4, x1, y, stroke, 2)
            svg.line(x2, y - 4, x2, y, stroke, 2)
            text = f"{g + 1} {label}"
            if text_width(text, 11) * 0.95 > x2 - x1:
                text = str(g + 1)
            svg.text((x1 + x2) / 2, y + 16, text, 11, bold=True, fill=stroke)
    for g, (tokens, label, meaning, fill, stroke) in enumerate(groups):
        y = legend_top + 22 * g
        svg.rect(20, y, 14, 14, fill, stroke)
        svg.text(42, y + 12, f"{g + 1} {label}", 12, anchor="start", bold=True)
        svg.text(350, y + 12, meaning, 12, anchor="start")
    svg.text(width / 2, legend_top + 22 * len(groups) + 22,
             f"Operands connect operators: conv1 reads operand {op['inputs'][0]} (written by "
             f"{writer}) and writes operand {op['outputs'][0]} (read by {reader}).", 12)
    return svg.render()


def graph_dot(kuiper, model, compact):
    """`kuiper graph MODEL --dot`, styled for the page (colours, spacing, a title)."""
    dot = subprocess.run([kuiper, "graph", model, "--dot"], check=True, capture_output=True,
                         text=True).stdout
    lines = dot.splitlines()
    colours = {"nn.Conv2d": BLUE, "nn.ReLU": GREEN, "nn.MaxPool2d": ORANGE,
               "nn.AdaptiveAvgPool2d": ORANGE, "pnnx.Expression": YELLOW, "nn.Linear": PURPLE,
               "torch.flatten": GREY, "pnnx.Input": RED, "pnnx.Output": RED}
    operators = sum(1 for line in lines if "[label=" in line)
    title = (f"kuiper graph --dot\\n{os.path.relpath(model, ROOT)}\\n{operators} operators; "
             "an edge is an operand")
    if compact:
        title += ("\\none column per stage (stem + layer1, layer2, layer3, layer4 + head); "
                  "dashed: into the next column")
    # The engine's own node attributes (box, monospace) stay; these come after and add to them.
    style = [f'  graph [label="{title}", labelloc=t, fontname="monospace", fontsize=11, '
             'nodesep=0.15, ranksep=0.22];',
             '  node [style="rounded,filled", fillcolor="#ffffff", margin="0.06,0.02", '
             'height=0.3];',
             "  edge [arrowsize=0.6];"]
    out = [lines[0], lines[1]] + style
    for line in lines[2:]:
        m = re.match(r'\s*("(?:[^"\\]|\\.)*") \[label="((?:[^"\\]|\\.)*)"\];$', line)
        if m:
            name, label = m.groups()
            op_type, _, shape = label.split("\\n")
            fill = colours.get(op_type, "#ffffff")
            if compact:
                # Type and output shape on one line: the names are in `kuiper graph resnet18`.
                label = f"{op_type.split('.')[-1]} {shape}"
                line = f'  {name} [label="{label}", fillcolor="{fill}", fontsize=9];'
            else:
                line = f'  {name} [label="{label}", fillcolor="{fill}"];'
        out.append(line)
    if compact:
        out = in_columns(out)
    return "\n".join(out) + "\n"


def in_columns(lines):
    """ResNet's stages side by side instead of one 51-operator column.

    An operator belongs to the stage of the last `layerN.` name at or before it
    in the engine's order (the stem goes with layer1, the head with layer4).
    Edges between stages stop constraining the ranks and are drawn dashed; the
    operators they enter share the top rank, in order.
    """
    stage, stages = 1, {}
    for line in lines:
        m = re.match(r'\s*"([^"]+)" \[label=', line)
        if m:
            layer = re.match(r"layer(\d+)\.", m.group(1))
            stage = int(layer.group(1)) if layer else stage
            stages[m.group(1)] = stage
    out, tops = [], [next(iter(stages))]
    for line in lines[:-1]:
        m = re.match(r'\s*"([^"]+)" -> "([^"]+)";$', line)
        if m and stages[m.group(1)] != stages[m.group(2)]:
            if m.group(2) not in tops:
                tops.append(m.group(2))
            line = line[:-1] + ' [constraint=false, style=dashed, color="#888888"];'
        out.append(line)
    tops.sort(key=list(stages).index)
    out.append("  newrank=true; splines=ortho;")
    out.append("  {rank=same; " + " -> ".join(f'"{t}"' for t in tops) + " [style=invis];}")
    return out + [lines[-1]]


def render_dot(dot_text):
    svg = subprocess.run(["dot", "-Tsvg"], input=dot_text, check=True, capture_output=True,
                         text=True).stdout
    # The version comment changes with every Graphviz release; the layout rarely does.
    return re.sub(r"<!-- Generated by graphviz version [^>]*-->\n", "", svg)


# ---------------------------------------------------------------- course 4 --
def kahn_steps():
    """Kahn's algorithm, as course4's KahnTopoSort runs it, on tiny_expression."""
    path = "models/fixtures/tiny_expression.pnnx.param"
    ops = read_param(os.path.join(ROOT, path))
    producer = {}
    for op in ops:
        for operand in op["outputs"]:
            producer[operand] = op["index"]
    # input_operators: each producer once, in file order (ConnectOperators).
    inputs = [sorted({producer[o] for o in op["inputs"]}) for op in ops]
    outputs = [[c["index"] for c in ops if op["index"] in inputs[c["index"]]] for op in ops]
    degree = [len(i) for i in inputs]
    ready = sorted(i for i in range(len(ops)) if degree[i] == 0)
    order = []
    steps = [(None, list(degree), list(ready), [], {})]
    while ready:
        op = ready.pop(0)  # the smallest index first
        order.append(op)
        changed = {}
        for nxt in outputs[op]:
            changed[nxt] = (degree[nxt], degree[nxt] - 1)
            degree[nxt] -= 1
            if degree[nxt] == 0:
                ready = sorted(ready + [nxt])
        steps.append((op, list(degree), list(ready), list(order), changed))
    assert len(order) == len(ops), "the fixture has a cycle"

    # Layers for the drawing: the longest path from an input.
    layer = [0] * len(ops)
    for op in order:
        for nxt in outputs[op]:
            layer[nxt] = max(layer[nxt], layer[op] + 1)
    n_layers = max(layer) + 1
    col_w, head_h, row_h = 78, 62, 46
    x_step, x_take, x_deg = 20, 60, 180
    x_ready = x_deg + col_w * len(ops) + 10
    x_order = x_ready + 100
    width = x_order + 120
    ty = 190  # the table's top, under the graph
    height = ty + head_h + row_h * len(steps) + 60
    svg = Svg(width, height, "Kahn's algorithm step by step")
    svg.text(width / 2, 26, f"Kahn's algorithm on {path}", 16, bold=True)
    svg.text(width / 2, 46, "in-degree = producers not yet emitted; take the ready operator with "
             "the smallest index; its consumers lose one in-degree", 12)

    # The graph, left to right: one column per layer, its operators stacked.
    pos = {}
    for lv in range(n_layers):
        members = [i for i in range(len(ops)) if layer[i] == lv]
        for j, i in enumerate(members):
            pos[i] = (85 + lv * 150, 112 + (j - (len(members) - 1) / 2) * 64)
    for op in range(len(ops)):
        for nxt in outputs[op]:
            (x1, y1), (x2, y2) = pos[op], pos[nxt]
            svg.line(x1 + 60, y1, x2 - 61, y2 + (y1 - y2) * 0.25, GREY_D, 1.2, arrow=True)
    for i, op in enumerate(ops):
        x, y = pos[i]
        svg.rect(x - 60, y - 20, 120, 40, BLUE, BLUE_D, 1.2, rx=6)
        svg.text(x, y - 4, f"{i}: {op['name']}", 11, mono=True, bold=True)
        svg.text(x, y + 12, f"{op['type']}  in={len(inputs[i])}", 9, mono=True)

    # The table: one row per step.
    svg.text(x_step + 14, ty + 40, "step", 11, bold=True)
    svg.text(x_take + 50, ty + 40, "take", 11, bold=True)
    svg.text(x_deg + col_w * len(ops) / 2, ty + 10, "in-degree of each operator", 11, bold=True)
    for i, op in enumerate(ops):
        svg.text(x_deg + col_w * i + col_w / 2, ty + 30, i, 11, bold=True)
        svg.text(x_deg + col_w * i + col_w / 2, ty + 46, op["name"], 9, mono=True)
    svg.text(x_ready + 45, ty + 40, "ready set", 11, bold=True)
    svg.text(x_order, ty + 40, "order so far", 11, anchor="start", bold=True)
    for s, (taken, degrees, ready_now, order_now, changed) in enumerate(steps):
        y = ty + head_h + s * row_h
        svg.rect(x_step - 6, y, x_order + 110 - x_step, row_h, "#ffffff" if s % 2 else "#f7f7f7",
                 "none", 0)
        svg.text(x_step + 14, y + 28, s, 13, bold=True)
        svg.text(x_take + 50, y + 28, "-" if taken is None else f"{taken} {ops[taken]['name']}",
                 10, mono=True)
        for i in range(len(ops)):
            cx = x_deg + col_w * i + col_w / 2
            if i in order_now:
                svg.rect(cx - 30, y + 8, 60, 30, GREY, GREY_D, rx=4)
                svg.text(cx, y + 28, "done", 11, fill=GREY_D)
            elif i in changed:
                old, new = changed[i]
                fill, stroke = (GREEN, GREEN_D) if new == 0 else (YELLOW, ORANGE_D)
                svg.rect(cx - 30, y + 8, 60, 30, fill, stroke, rx=4)
                svg.text(cx, y + 28, f"{old} -> {new}", 12, mono=True, bold=True)
            else:
                fill, stroke = (GREEN, GREEN_D) if degrees[i] == 0 else ("#ffffff", GREY_D)
                svg.rect(cx - 30, y + 8, 60, 30, fill, stroke, rx=4)
                svg.text(cx, y + 28, degrees[i], 12, mono=True)
        svg.text(x_ready + 45, y + 28, "{" + ", ".join(map(str, ready_now)) + "}", 12,
                 mono=True)
        svg.text(x_order, y + 28, " ".join(map(str, order_now)) or "(empty)", 12,
                 anchor="start", mono=True)
    y = ty + head_h + len(steps) * row_h + 26
    svg.text(width / 2, y, "order: " + ", ".join(ops[i]["name"] for i in order), 12, mono=True)
    svg.text(width / 2, y + 20, "green = in-degree 0 (ready); yellow = just decremented; "
             "relu (1) goes before sigmoid (2) only because its index is smaller", 11)
    return svg.render()


# ---------------------------------------------------------------- course 5 --
def registrations():
    """{type: creator} from every LayerRegistererWrapper line of the engine and of course 5's
    solution (the skeleton leaves the registration to the student)."""
    sources = []
    for folder in ("kuiper/src/layer", "solutions/course5_layers/src"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".cpp"):
                sources.append(os.path.join(folder, name))
    table = {}
    for source in sources:
        with open(os.path.join(ROOT, source), encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"LayerRegistererWrapper\s+\w+\(\s*\{([^}]*)\}\s*,\s*([\w:]+)\)",
                             text):
            for type_name in re.findall(r'"([^"]+)"', m.group(1)):
                table[type_name] = (m.group(2), os.path.basename(source))
    return table


def registry():
    table = registrations()
    shown = sorted(["F.sigmoid", "nn.Conv2d", "nn.Linear", "nn.MaxPool2d", "nn.ReLU",
                    "nn.Sigmoid", "pnnx.Expression", "torch.flatten"])  # as std::map orders them
    svg = Svg(980, 560, "The layer registry and a Forward call")
    svg.text(490, 26, "The layer registry: filled before main(), read by RuntimeGraph::Build",
             16, bold=True)
    # 1. Registration lines, run by static initialisation.
    svg.text(20, 62, "1. static initialisation (before main): one line per layer file", 13,
             anchor="start", bold=True)
    examples = [("kuiper/src/layer/convolution.cpp",
                 'LayerRegistererWrapper kConvolutionRegistration({"nn.Conv2d"}, '
                 'CreateConvolution);'),
                ("kuiper/src/layer/relu.cpp",
                 'LayerRegistererWrapper kReluRegistration({"nn.ReLU", "F.relu"}, CreateRelu);'),
                ("course5_layers/src/sigmoid.cpp (course 5: you write this one)",
                 "// registers SigmoidLayer::Create for nn.Sigmoid and F.sigmoid")]
    for i, (path, code) in enumerate(examples):
        y = 74 + i * 44
        svg.rect(20, y, 560, 38, YELLOW, ORANGE_D, rx=4)
        svg.text(28, y + 14, path, 10, anchor="start", fill=GREY_D)
        svg.text(28, y + 30, code, 8.6, anchor="start", mono=True)
        target = shown.index(("nn.Conv2d", "nn.ReLU", "nn.Sigmoid")[i])
        svg.line(580, y + 19, 658, 62 + 24 + target * 22 + 11, ORANGE_D, 1.2, arrow=True)
    svg.text(300, 222, "the wrapper's constructor calls LayerRegisterer::RegisterCreator(type, "
             "creator) for each type", 11)
    # 2. The map.
    mx, my = 660, 62
    svg.text(mx + 150, my, "Registry(): std::map<std::string, LayerCreator>", 11, mono=True,
             bold=True)
    svg.text(mx + 150, my + 15, f"{len(table)} types in this engine, sorted by key", 10,
             fill=GREY_D)
    for i, key in enumerate(shown):
        y = my + 24 + i * 22
        fill = GREEN if key in ("nn.Sigmoid", "F.sigmoid") else "#ffffff"
        svg.rect(mx, y, 130, 22, fill, GREEN_D)
        svg.rect(mx + 130, y, 170, 22, fill, GREEN_D)
        svg.text(mx + 6, y + 15, key, 10, anchor="start", mono=True)
        svg.text(mx + 136, y + 15, table[key][0], 10, anchor="start", mono=True)
    svg.text(mx + 150, my + 24 + len(shown) * 22 + 14, "... (a selection)", 10, fill=GREY_D)
    # 3. Build: one layer per operator.
    by = 280
    svg.text(20, by, "2. RuntimeGraph::Build(): one layer per operator, found by its PNNX type",
             13, anchor="start", bold=True)
    steps = [("operator line", 'nn.Sigmoid  sigmoid  1 1 0 2 ...', BLUE, BLUE_D),
             ("LayerRegisterer::CreateLayer(op)", 'Registry().find(op.type)', GREEN, GREEN_D),
             ("creator(op)", "SigmoidLayer::Create(op)", GREEN, GREEN_D),
             ("op->layer", "std::unique_ptr<Layer>", BLUE, BLUE_D)]
    for i, (head, body, fill, stroke) in enumerate(steps):
        x = 20 + i * 240
        svg.rect(x, by + 14, 215, 46, fill, stroke, rx=5)
        svg.text(x + 107, by + 32, head, 11, bold=True, mono=True)
        svg.text(x + 107, by + 50, body, 10, mono=True)
        if i:
            svg.line(x - 25, by + 37, x - 1, by + 37, INK, 1.2, arrow=True)
    svg.text(490, by + 80, "an unknown type is a LayerError naming the operator, before "
             "anything runs", 11, fill=GREY_D)
    # 4. Forward.
    fy = 390
    svg.text(20, fy, "3. RuntimeGraph::Forward(inputs): every operator in topological order",
             13, anchor="start", bold=True)
    calls = [("RuntimeGraph::Forward", "for op in topo_operators_:", "op->layer->Forward()"),
             ("Layer::Forward()", "inputs = input operands' datas", "outputs = output operand"),
             ("SigmoidLayer::Forward", "(inputs, outputs)", "virtual: the layer's own code"),
             ("InferStatus", "kInferSuccess, else Forward", "throws LayerError (the op)")]
    for i, (head, l1, l2) in enumerate(calls):
        x = 20 + i * 240
        fill, stroke = (PURPLE, PURPLE_D) if i != 2 else (GREEN, GREEN_D)
        svg.rect(x, fy + 14, 215, 62, fill, stroke, rx=5)
        svg.text(x + 107, fy + 32, head, 11, bold=True, mono=True)
        svg.text(x + 107, fy + 50, l1, 10, mono=True)
        svg.text(x + 107, fy + 66, l2, 10, mono=True)
        if i:
            svg.line(x - 25, fy + 45, x - 2, fy + 45, INK, 1.2, arrow=True)
    svg.text(490, fy + 104, "Layer::Forward() gathers the batch: {A0..An-1, B0..Bn-1} for "
             "input operands A and B, then calls", 11)
    svg.text(490, fy + 122, "Forward(const std::vector<sftensor>& inputs, "
             "std::vector<sftensor>& outputs), which each layer overrides.", 11)
    svg.text(490, fy + 146, "green: course 5 writes SigmoidLayer::Forward, SigmoidLayer::Create "
             "and their registration", 11, fill=GREEN_D, bold=True)
    return svg.render()


# ---------------------------------------------------------------- course 6 --
def im2col_groups():
    """Im2Col + one GEMM per group: 4 input channels, groups=2, 3x3 input, 2x2 kernel."""
    in_ch, groups, out_ch, size, k = 4, 2, 4, 3, 2
    out = size - k + 1  # stride 1, no padding, no dilation
    per_in, per_out = in_ch // groups, out_ch // groups
    letters = "abcd"
    shades = [(BLUE, BLUE_D), ("#b9d3ee", BLUE_D), (ORANGE, ORANGE_D), ("#f9c89a", ORANGE_D)]
    svg = Svg(900, 700, "im2col of a grouped convolution")
    svg.text(450, 24, "nn.Conv2d(4, 4, kernel_size=2, groups=2) on a 4 x 3 x 3 input", 15,
             bold=True)
    svg.text(450, 42, "ConvolutionLayer::ComputeGroups: one im2col matrix and one GEMM per group "
             "(stride 1, no padding: output 2 x 2)", 12)
    # The input channels.
    cw = 30
    svg.text(20, 64, "input (channels x rows x cols); cell 'b12' = channel b, row 1, col 2", 12,
             anchor="start")
    for c in range(in_ch):
        gx = 40 + c * 130 + (40 if c >= per_in else 0)
        svg.text(gx + size * cw / 2, 84, f"channel {c} (group {c // per_in})", 11, bold=True)
        for r in range(size):
            for q in range(size):
                svg.rect(gx + q * cw, 92 + r * 24, cw, 24, *shades[c])
                svg.text(gx + q * cw + cw / 2, 92 + r * 24 + 16, f"{letters[c]}{r}{q}", 10,
                         mono=True)
    svg.text(720, 110, "weight: (4, 2, 2, 2) =", 11, anchor="start", mono=True)
    svg.text(720, 126, "(out, in/groups, kh, kw)", 11, anchor="start", mono=True)
    svg.text(720, 148, "w2101 = weight[2][1][0][1]", 11, anchor="start", mono=True)

    positions = [(oy, ox) for ox in range(out) for oy in range(out)]  # row oy + ox * out_h
    taps = [(c, i, j) for c in range(per_in) for i in range(k) for j in range(k)]
    for g in range(groups):
        y0 = 200 + g * 250
        svg.text(20, y0, f"group {g}: Im2Col(input, first_channel={g * per_in}, "
                 f"channels={per_in}, ...) x kernels_[{g}] = output channels "
                 f"{g * per_out}..{g * per_out + per_out - 1}", 13, anchor="start", bold=True)
        mx, my, mw, mh = 100, y0 + 58, 34, 24
        svg.text(mx + len(taps) * mw / 2, y0 + 22, f"im2col: {len(positions)} x {len(taps)} "
                 "(out_h*out_w) x (channels*kh*kw)", 11)
        for t, (c, i, j) in enumerate(taps):
            svg.text(mx + t * mw + mw / 2, my - 8, f"{c},{i},{j}", 9, mono=True, fill=GREY_D)
        svg.text(mx - 6, my - 8, "(c,i,j)", 9, anchor="end", mono=True, fill=GREY_D)
        for p, (oy, ox) in enumerate(positions):
            svg.text(mx - 6, my + p * mh + 16, f"({oy},{ox})", 10, anchor="end", mono=True)
            for t, (c, i, j) in enumerate(taps):
                channel = g * per_in + c
                svg.rect(mx + t * mw, my + p * mh, mw, mh, *shades[channel])
                svg.text(mx + t * mw + mw / 2, my + p * mh + 16,
                         f"{letters[channel]}{oy + i}{ox + j}", 10, mono=True)
        svg.text(mx - 60, my + len(positions) * mh + 18, "rows: output position (oy, ox), "
                 "row = oy + ox*out_h (column-major, like an output slice)", 10, anchor="start",
                 fill=GREY_D)
        # x the kernels.
        kx, ky, kw_, kh_ = 490, y0 + 30, 52, 20
        svg.text(kx - 22, my + 2 * mh + 6, "x", 18, bold=True)
        for o in range(per_out):
            svg.text(kx + o * kw_ + kw_ / 2, ky - 4, f"out {g * per_out + o}", 10, bold=True)
            for t, (c, i, j) in enumerate(taps):
                svg.rect(kx + o * kw_, ky + t * kh_, kw_, kh_, *shades[g * per_in + c][:1],
                         GREY_D)
                svg.text(kx + o * kw_ + kw_ / 2, ky + t * kh_ + 14, f"w{g * per_out + o}{c}{i}{j}",
                         10, mono=True)
        svg.text(kx + per_out * kw_ + 4, ky + len(taps) * kh_ + 14, f"kernels_[{g}]: "
                 f"{len(taps)} x {per_out}", 10, anchor="end", fill=GREY_D)
        # = the output channels.
        ox_, ow = 660, 58
        svg.text(ox_ - 16, my + 2 * mh + 6, "=", 18, bold=True)
        fill = (GREEN, GREEN_D) if g == 0 else (PURPLE, PURPLE_D)
        for o in range(per_out):
            svg.text(ox_ + o * ow + ow / 2, my - 8, f"ch {g * per_out + o}", 10, bold=True)
            for p, (oy, ox) in enumerate(positions):
                svg.rect(ox_ + o * ow, my + p * mh, ow, mh, *fill)
                svg.text(ox_ + o * ow + ow / 2, my + p * mh + 16, f"y{g * per_out + o}({oy},{ox})",
                         9, mono=True)
        svg.text(ox_ + ow, my + len(positions) * mh + 34, "written straight into", 10)
        svg.text(ox_ + ow, my + len(positions) * mh + 48,
                 f"output.slice({g * per_out}).memptr()", 10, mono=True)
    svg.text(450, 690, "each group sees only its own input channels: group 1's matrix never "
             "holds a or b, and its kernels have in/groups = 2 channels", 12)
    return svg.render()


def winograd_gemms():
    """The core's Winograd route: F(2x2, 3x3) as 16 GEMMs, C_in = 2, C_out = 3, 4 tiles."""
    in_ch, out_ch, out_size = 2, 3, 4  # 3x3 kernel, stride 1, padding 1: input 4 x 4
    tiles_h = out_size // 2
    tiles = [(ty, tx) for tx in range(tiles_h) for ty in range(tiles_h)]  # t = ty + tx*tiles_h
    letters = "ab"
    shades = [(BLUE, BLUE_D), ("#b9d3ee", BLUE_D)]  # input channel a, b (as in im2col_groups)
    dark_green = "#b7dfb0"
    e_pick = 5  # the element the middle row follows: e = 4i + j, i = 1, j = 1
    svg = Svg(940, 792, "Winograd F(2x2, 3x3) as 16 GEMMs")
    svg.text(470, 24, "Winograd F(2x2, 3x3) as 16 GEMMs: C_in = 2, C_out = 3, 3x3 kernels, "
             "padding 1, a 4 x 4 output = 4 tiles", 15, bold=True)
    svg.text(470, 44, "WinogradMultiplyInto (kuiper/src/layer/winograd.cpp): "
             "Y = A^T [ sum over c of (G g G^T) .* (B^T d B) ] A, for each 2 x 2 tile "
             "and output channel", 12)

    def grid(x0, y0, rows, cols, cw, ch, label, fill, stroke, size=10, bold=None):
        """A rows x cols grid. label(r, q) is a cell's text; fill is a colour (with stroke) or
        fill(r, q) gives (fill, stroke) per cell; cells where bold(r, q) are outlined."""
        for r in range(rows):
            for q in range(cols):
                colours = fill(r, q) if callable(fill) else (fill, stroke)
                svg.rect(x0 + q * cw, y0 + r * ch, cw, ch, *colours)
                svg.text(x0 + q * cw + cw / 2, y0 + r * ch + ch / 2 + size * 0.35, label(r, q),
                         size, mono=True)
        if bold:
            for r in range(rows):
                for q in range(cols):
                    if bold(r, q):
                        svg.rect(x0 + q * cw, y0 + r * ch, cw, ch, "none", INK, 2.5)

    def arrow(x1, x2, y, label):
        svg.line(x1, y, x2, y, arrow=True)
        svg.text((x1 + x2) / 2, y - 8, label, 11, mono=True)

    # (1) The two transforms.
    svg.text(20, 78, "(1) transforms: V = B^T d B per tile and input channel; "
             "U = G g G^T per kernel, once when the layer is made", 13,
             anchor="start", bold=True)
    ix, iy, ic = 44, 118, 26  # the padded input channel a: 6 x 6, rows and cols -1..4
    svg.text(ix + 3 * ic, iy - 10, "input channel a, padded", 11, bold=True)
    for r in range(6):
        for q in range(6):
            inside = 1 <= r <= 4 and 1 <= q <= 4
            if inside:
                svg.rect(ix + q * ic, iy + r * ic, ic, ic, *shades[0])
                svg.text(ix + q * ic + ic / 2, iy + r * ic + 17, f"a{r - 1}{q - 1}", 9, mono=True)
            else:
                svg.rect(ix + q * ic, iy + r * ic, ic, ic, "#ffffff", GREY_D, dash="2,2")
                svg.text(ix + q * ic + ic / 2, iy + r * ic + 17, "0", 9, mono=True, fill=GREY_D)
    svg.rect(ix, iy, 4 * ic, 4 * ic, "none", INK, 2.5)  # tile t0's patch: rows, cols -1..2
    svg.text(ix + 3 * ic, iy + 6 * ic + 16, "d = tile t0's 4 x 4 patch (outlined);", 10,
             fill=GREY_D)
    svg.text(ix + 3 * ic, iy + 6 * ic + 29, "tile (ty, tx) starts at (2ty - 1, 2tx - 1)", 10,
             fill=GREY_D)
    vx, vy, ec, er = 282, 140, 44, 26  # the 4 x 4 transformed tiles
    arrow(ix + 6 * ic + 8, vx - 8, vy + 2 * er, "B^T d B")
    svg.text(vx + 2 * ec, vy - 10, "V: v_e(t0, a), e = 4i + j", 11, bold=True)
    grid(vx, vy, 4, 4, ec, er, lambda r, q: f"v{4 * r + q}", *shades[0],
         bold=lambda r, q: 4 * r + q == e_pick)
    svg.text(vx + 2 * ec, vy + 4 * er + 16, "16 values, one per element e;", 10, fill=GREY_D)
    svg.text(vx + 2 * ec, vy + 4 * er + 29, "every tile and channel likewise", 10, fill=GREY_D)

    gx, gy, gc = 528, 153, 40  # kernel (out 0, channel a), 3 x 3
    svg.text(gx + 1.5 * gc, gy - 23, "kernel g of out 0,", 11, bold=True)
    svg.text(gx + 1.5 * gc, gy - 10, "channel a", 11, bold=True)
    grid(gx, gy, 3, 3, gc, er, lambda r, q: f"w0a{r}{q}", shades[0][0], GREY_D)
    ux = 722
    arrow(gx + 3 * gc + 8, ux - 8, vy + 2 * er, "G g G^T")
    svg.text(ux + 2 * ec, vy - 10, "U: u_e(a, 0)", 11, bold=True)
    grid(ux, vy, 4, 4, ec, er, lambda r, q: f"u{4 * r + q}", shades[0][0], GREY_D,
         bold=lambda r, q: 4 * r + q == e_pick)
    svg.text(ux + 2 * ec, vy + 4 * er + 16, "for each of the C_in x C_out kernels;", 10,
             fill=GREY_D)
    svg.text(ux + 2 * ec, vy + 4 * er + 29, "the layer keeps U (WinogradKernels)", 10,
             fill=GREY_D)

    # (2) One GEMM per element.
    y2 = 326
    svg.text(20, y2, f"(2) for each element e, one GEMM over all tiles and channels: "
             f"M_e = V_e U_e (here e = {e_pick}: i = 1, j = 1)", 13, anchor="start", bold=True)
    my, mh = y2 + 56, 26
    layers, step = 3, 5  # the other elements' matrices, drawn behind

    def stack(x, y, w, h):
        for s in range(layers, 0, -1):
            svg.rect(x + s * step, y - s * step, w, h, "#ffffff", GREY_D, dash="3,2")

    # V_e: tiles x C_in.
    vw = 66
    stack(110, my, in_ch * vw, len(tiles) * mh)
    for c in range(in_ch):
        svg.text(110 + c * vw + vw / 2, my - 8 - layers * step, f"channel {letters[c]}", 10,
                 bold=True)
    for t, (ty, tx) in enumerate(tiles):
        svg.text(104, my + t * mh + 17, f"t{t} ({ty},{tx})", 10, anchor="end", mono=True)
    grid(110, my, len(tiles), in_ch, vw, mh,
         lambda t, c: f"v{e_pick}(t{t},{letters[c]})", lambda t, c: shades[c], None,
         bold=lambda t, c: t == 0 and c == 0)
    svg.text(110 + vw, my + len(tiles) * mh + 18, f"V_{e_pick}: tiles x C_in = "
             f"{len(tiles)} x {in_ch}", 11, bold=True)
    svg.text(110 + vw, my + len(tiles) * mh + 32, "(rows: tile t (ty,tx), t = ty + tx*tiles_h)",
             10, fill=GREY_D)
    # x U_e: C_in x C_out.
    svg.text(268, my + 2 * mh + 6, "x", 18, bold=True)
    ux2, uw, uy = 300, 62, my + mh
    stack(ux2, uy, out_ch * uw, in_ch * mh)
    for o in range(out_ch):
        svg.text(ux2 + o * uw + uw / 2, uy - 8 - layers * step, f"out {o}", 10, bold=True)
    for c in range(in_ch):
        svg.text(ux2 - 6, uy + c * mh + 17, letters[c], 10, anchor="end", mono=True)
    grid(ux2, uy, in_ch, out_ch, uw, mh, lambda c, o: f"u{e_pick}({letters[c]},{o})",
         lambda c, o: (shades[c][0], GREY_D), None, bold=lambda c, o: c == 0 and o == 0)
    svg.text(ux2 + 1.5 * uw, my + len(tiles) * mh + 18, f"U_{e_pick}: C_in x C_out = "
             f"{in_ch} x {out_ch}", 11, bold=True)
    # = M_e: tiles x C_out.
    svg.text(516, my + 2 * mh + 6, "=", 18, bold=True)
    mx, mw = 546, 66
    stack(mx, my, out_ch * mw, len(tiles) * mh)
    for o in range(out_ch):
        svg.text(mx + o * mw + mw / 2, my - 8 - layers * step, f"out {o}", 10, bold=True)
    grid(mx, my, len(tiles), out_ch, mw, mh, lambda t, o: f"m{e_pick}(t{t},{o})", GREEN,
         GREEN_D, bold=lambda t, o: t == 0 and o == 0)
    svg.text(mx + 1.5 * mw, my + len(tiles) * mh + 18, f"M_{e_pick}: tiles x C_out = "
             f"{len(tiles)} x {out_ch}", 11, bold=True)
    svg.text(mx + 1.5 * mw, my + len(tiles) * mh + 32, "m(t,o) = sum over c of v(t,c) u(c,o)",
             10, fill=GREY_D)
    sx = 800
    svg.text(sx + 50, my + 22, "x 16", 22, bold=True)
    svg.text(sx + 50, my + 44, "one GEMM per", 11)
    svg.text(sx + 50, my + 58, "element e = 0..15", 11)
    svg.text(sx + 50, my + 78, "(dashed: the other", 10, fill=GREY_D)
    svg.text(sx + 50, my + 91, "15 V_e, U_e, M_e)", 10, fill=GREY_D)

    # (3) The output transform.
    y3 = 556
    svg.text(20, y3, "(3) output transform, once per tile and output channel: "
             "Y = A^T M A (written straight into the output)", 13, anchor="start", bold=True)
    oy = y3 + 46
    svg.text(110 + 2 * ec, oy - 10, "M: m_e(t0, 0), one from each M_e", 11, bold=True)
    grid(110, oy, 4, 4, ec, er, lambda r, q: f"m{4 * r + q}", GREEN, GREEN_D,
         bold=lambda r, q: 4 * r + q == e_pick)
    svg.text(110 + 2 * ec, oy + 4 * er + 16, "16 values of tile t0, out 0", 10, fill=GREY_D)
    yx, yw = 400, 66
    arrow(110 + 4 * ec + 8, yx - 8, oy + 2 * er, "A^T M A")
    svg.text(yx + yw, oy + er - 10, "Y: 2 x 2 outputs", 11, bold=True)
    grid(yx, oy + er, 2, 2, yw, er, lambda r, q: f"y0({r},{q})", dark_green, GREEN_D)
    cx, cw = 672, 56
    arrow(yx + 2 * yw + 8, cx - 40, oy + 2 * er, "tile t0")
    svg.text(cx + 2 * cw, oy - 10, "output channel 0 (4 x 4)", 11, bold=True)
    grid(cx, oy, out_size, out_size, cw, er, lambda r, q: f"y0({r},{q})",
         lambda r, q: (dark_green if r < 2 and q < 2 else GREEN, GREEN_D), None)
    for t, (ty, tx) in enumerate(tiles):
        svg.rect(cx + 2 * tx * cw, oy + 2 * ty * er, 2 * cw, 2 * er, "none", GREEN_D, 2.5)
        side_x = cx - 8 if tx == 0 else cx + 4 * cw + 8
        svg.text(side_x, oy + (2 * ty + 1) * er + 4, f"t{t}", 11, bold=True,
                 anchor="end" if tx == 0 else "start")
    svg.text(cx + 2 * cw, oy + 4 * er + 16, "tiles numbered column-major, like", 10,
             fill=GREY_D)
    svg.text(cx + 2 * cw, oy + 4 * er + 29, "the output: t = ty + tx * tiles_h", 10,
             fill=GREY_D)

    svg.text(470, 760, "per tile, input and output channel: 16 multiplications (one per element) "
             "instead of im2col's 4 outputs x 9 taps = 36, so 4/9 of its multiply-adds;", 12)
    svg.text(470, 778, "the transforms only add, subtract and halve. Outlined cells: one value "
             "followed from (1) through (2) to (3).", 12)
    return svg.render()


# ---------------------------------------------------------------- course 7 --
FUNCTIONS = {"add": "kAdd", "sub": "kSub", "mul": "kMul", "div": "kDiv", "pow": "kPow",
             "neg": "kNeg", "exp": "kExp", "log": "kLog", "sqrt": "kSqrt", "rsqrt": "kRsqrt",
             "abs": "kAbs", "sin": "kSin"}
UNARY = {"neg", "exp", "log", "sqrt", "rsqrt", "abs", "sin"}


def register_grid(svg, x, y, w, h, rows, cols, name, row_label, pick):
    """A tile's registers of sums: cell (r, c) named name(r, c), each row
    labelled on the right, the cell `pick` highlighted."""
    for r in range(rows):
        svg.text(x + cols * w + 6, y + r * h + 20, row_label(r), 10, anchor="start", mono=True)
        for c in range(cols):
            chosen = (r, c) == pick
            svg.rect(x + c * w, y + r * h, w, h, YELLOW if chosen else PURPLE,
                     ORANGE_D if chosen else PURPLE_D, 2 if chosen else 1)
            svg.text(x + c * w + w / 2, y + r * h + 20, name(r, c), 10, mono=True, bold=chosen)


def direct_tile():
    """The core's direct route: one register tile (64 output channels x 6 positions), one tap."""
    svg = Svg(940, 480, "The direct route: one register tile, one tap")
    svg.text(470, 24, "DirectMultiplyInto (kuiper/src/layer/direct_conv.cpp): one register tile, "
             "one kernel tap", 15, bold=True)
    svg.text(470, 42, "64 output channels x 6 output positions = 24 AVX-512 registers of sums; "
             "per tap t = (c, i, j): 4 loads, 6 broadcasts, 24 multiply-adds", 12)
    # (1) Input channel c, zero-padded: 7 x 7 inside a border of zeros.
    cell, gx, gy, n = 24, 52, 110, 9
    svg.text(gx + n * cell / 2, 72, "input channel c, zero-padded", 12, bold=True)
    svg.text(gx + n * cell / 2, 88, "7 x 7 and a border; 3x3 kernel, tap (1, 1)", 11, fill=GREY_D)
    under = {(q + 1, 7): q for q in range(6)}  # the value under tap (1, 1) of position (q, 6)
    for y in range(n):
        for x in range(n):
            border = y in (0, n - 1) or x in (0, n - 1)
            fill, stroke = (GREY, GREY_D) if border else (BLUE, BLUE_D)
            if (y, x) in under:
                fill, stroke = ORANGE, ORANGE_D
            svg.rect(gx + x * cell, gy + y * cell, cell, cell, fill, stroke)
            if (y, x) in under:
                svg.text(gx + x * cell + cell / 2, gy + y * cell + 16, f"x{under[(y, x)]}", 10,
                         mono=True)
            elif border:
                svg.text(gx + x * cell + cell / 2, gy + y * cell + 16, "0", 9, mono=True,
                         fill=GREY_D)
    svg.rect(gx + 6 * cell, gy, 3 * cell, 3 * cell, "none", RED_D, 2, dash="5,3")
    svg.text(gx + n * cell / 2, gy + n * cell + 18, "dashed: the window of output position "
             "(0, 6)", 10, fill=RED_D)
    svg.text(gx + n * cell / 2, gy + n * cell + 34, "x0..x5: what tap (1, 1) reads for output "
             "positions (0..5, 6)", 10)
    svg.text(gx + n * cell / 2, gy + n * cell + 50, "(a column: contiguous in memory)", 10,
             fill=GREY_D)
    # (2) The packed kernels of tap t: 4 registers of 16 output channels.
    kx, ky, kw_, kh_ = 330, 110, 68, 28
    svg.text(kx + 2 * kw_, 72, "packed kernels of tap t", 12, bold=True)
    svg.text(kx + 2 * kw_, 88, "64 weights side by side (made at load)", 11, fill=GREY_D)
    for v in range(4):
        svg.rect(kx + v * kw_, ky, kw_, kh_, GREEN, GREEN_D, 2 if v == 0 else 1)
        svg.text(kx + v * kw_ + kw_ / 2, ky + 18, f"w{v}", 12, mono=True, bold=v == 0)
        svg.text(kx + v * kw_ + kw_ / 2, ky + kh_ + 14, f"o{16 * v}..{16 * v + 15}", 9,
                 mono=True, fill=GREY_D)
    svg.text(kx + 2 * kw_, ky + kh_ + 34, "4 loads of 16 floats", 10)
    # (3) The 24 registers of sums: positions down, output-channel registers across.
    ax, ay, aw, ah = 640, 110, 66, 30
    svg.text(ax + 2 * aw, 72, "24 registers of sums", 12, bold=True)
    svg.text(ax + 2 * aw, 88, "acc[v][q]: 16 output channels of position q", 11, fill=GREY_D)
    register_grid(svg, ax, ay, aw, ah, 6, 4, lambda q, v: f"acc[{v}][{q}]", lambda q: f"q{q}",
                  (5, 0))
    # One multiply-add followed: acc[0][5] += w0 * broadcast(x5).
    x5 = (gx + 8 * cell, gy + 6 * cell + cell / 2)
    svg.polyline([x5, (310, x5[1]), (310, 340), (ax + aw / 2, 340), (ax + aw / 2, ay + 6 * ah + 2)],
                 ORANGE_D, 1.5, arrow=True)
    svg.text(470, 334, "broadcast x5 to 16 lanes", 11, fill=ORANGE_D, halo=True)
    svg.polyline([(kx + kw_ / 2, ky + kh_ + 40), (kx + kw_ / 2, ay + 5 * ah + ah / 2),
                  (ax - 2, ay + 5 * ah + ah / 2)], GREEN_D, 1.5, arrow=True)
    svg.text(500, ay + 5 * ah + ah / 2 - 6, "w0", 11, fill=GREEN_D, mono=True, halo=True)
    svg.text(ax + 2 * aw + 20, 364, "acc[0][5] += w0 * x5 (one FMA, 16 lanes)", 11, mono=True,
             fill=ORANGE_D)
    # What it saves, and what follows.
    notes = [
        "For each tap: load w0..w3 once; for each of the 6 positions broadcast its x and do 4 "
        "multiply-adds (24 in all).",
        "im2col would first copy x5 into row (5, 6), column t of its matrix, and the GEMM "
        "would read it back; here it is read in place.",
        "Each tile sums at most 288 taps (32 channels of a 3x3 kernel) from zero, then adds them "
        "to the running sums of its 6 positions;",
        "at the end the sums are transposed, 16 x 16 in registers, into output channels "
        "o0..o63 (one row of positions each), with bias and activation.",
    ]
    svg.lines(470, 402, notes)
    return svg.render()


def column_tile():
    """The direct route's column tile (48 output rows x 8 output channels), one tap, stride 2."""
    svg = Svg(940, 550, "The direct route: one column tile, one tap")
    svg.text(470, 24, "ColumnTile (kuiper/src/layer/direct_conv.cpp): one column tile, one kernel "
             "tap, stride 2", 15, bold=True)
    svg.text(470, 42, "48 output rows of one column x 8 output channels = 24 AVX-512 registers "
             "of sums; per tap t = (c, i, j): 3 loads, 8 broadcasts, 24 multiply-adds", 12)
    # (1) How the window stores a column for stride 2: split by row parity.
    cell, mx, my = 22, 60, 100
    svg.text(mx + 4 * cell, 72, "a zero-padded input column", 12, bold=True)
    svg.text(mx + 4 * cell, 88, "(its first 8 rows)", 11, fill=GREY_D)
    for r in range(8):
        fill, stroke = (BLUE, BLUE_D) if r % 2 == 0 else (ORANGE, ORANGE_D)
        svg.rect(mx + r * cell, my, cell, cell, fill, stroke)
        svg.text(mx + r * cell + cell / 2, my + 15, str(r), 10, mono=True)
    svg.text(mx + 4 * cell, my + 44, "stored by row parity in the window:", 11)
    for k, r in enumerate([0, 2, 4, 6, 1, 3, 5, 7]):
        fill, stroke = (BLUE, BLUE_D) if r % 2 == 0 else (ORANGE, ORANGE_D)
        svg.rect(mx + k * cell, my + 54, cell, cell, fill, stroke)
        svg.text(mx + k * cell + cell / 2, my + 69, str(r), 10, mono=True)
    svg.text(mx + 2 * cell, my + 92, "even rows", 10, fill=BLUE_D)
    svg.text(mx + 6 * cell, my + 92, "odd rows", 10, fill=ORANGE_D)
    svg.text(mx + 4 * cell, my + 112, "output row y reads row 2y + i under tap (i, j):", 10,
             fill=GREY_D)
    svg.text(mx + 4 * cell, my + 126, "rows y0 .. y0 + 47 are then neighbours", 10,
             fill=GREY_D)
    # The odd half of the real column: three registers of 16 under tap (1, j).
    bx, by, bw, seg = 80, 286, 40, 40
    svg.text(mx + 4 * cell, by - 16, "the odd rows, under tap (1, j)", 11, bold=True)
    svg.rect(bx, by, bw, 3 * seg + 20, ORANGE, ORANGE_D)
    for q in range(3):
        y = by + 10 + q * seg
        svg.rect(bx, y, bw, seg, YELLOW if q == 0 else "#ffffff", ORANGE_D, 2 if q == 0 else 1)
        svg.text(bx + bw / 2, y + seg / 2 + 4, f"in[{q}]", 10, mono=True, bold=q == 0)
        svg.text(bx + bw + 6, y + seg / 2 + 4, f"rows y0+{16 * q}..+15", 10, anchor="start",
                 mono=True, fill=GREY_D)
    svg.text(bx + bw / 2 + 56, by + 3 * seg + 38, "3 loads of 16 floats", 10)
    # (2) The tap's packed weights for the tile's 8 channels.
    kx, ky, kw_ = 330, 100, 34
    svg.text(kx + 4 * kw_, 72, "packed kernels of tap t", 12, bold=True)
    svg.text(kx + 4 * kw_, 88, "the tile's 8 channels o .. o + 7", 11, fill=GREY_D)
    for v in range(8):
        svg.rect(kx + v * kw_, ky, kw_, 28, GREEN, GREEN_D, 2 if v == 3 else 1)
        svg.text(kx + v * kw_ + kw_ / 2, ky + 18, f"w{v}", 11, mono=True, bold=v == 3)
    svg.text(kx + 4 * kw_, ky + 48, "each broadcast to 16 lanes", 10)
    # (3) The 24 registers of sums: channels down, row registers across.
    ax, ay, aw, ah = 640, 110, 82, 30
    svg.text(ax + 1.5 * aw, 72, "24 registers of sums", 12, bold=True)
    svg.text(ax + 1.5 * aw, 88, "acc[v][q]: channel o+v, 16 output rows", 11, fill=GREY_D)
    register_grid(svg, ax, ay, aw, ah, 8, 3, lambda v, q: f"acc[{v}][{q}]", lambda v: f"o+{v}",
                  (3, 0))
    row3 = ay + 3 * ah
    svg.polyline([(bx + bw + 120, by + 10 + seg / 2), (ax - 40, by + 10 + seg / 2),
                  (ax - 40, row3 + 22), (ax - 2, row3 + 22)], ORANGE_D, 1.5, arrow=True)
    svg.text(420, by + 10 + seg / 2 - 6, "in[0]: 16 input values, loaded whole", 11,
             fill=ORANGE_D, halo=True)
    svg.polyline([(kx + 3.5 * kw_, ky + 28), (kx + 3.5 * kw_, row3 + 8), (ax - 2, row3 + 8)],
                 GREEN_D, 1.5, arrow=True)
    svg.text(kx + 3.5 * kw_ + 8, row3 + 2, "broadcast w3", 11, anchor="start", fill=GREEN_D,
             halo=True)
    svg.text(ax + 1.5 * aw, ay + 8 * ah + 22, "acc[3][0] += w3 * in[0]", 11, mono=True,
             fill=ORANGE_D)
    svg.text(ax + 1.5 * aw, ay + 8 * ah + 38, "(one FMA, 16 lanes)", 11, mono=True,
             fill=ORANGE_D)
    notes = [
        "For each tap: load in[0..2] once; for each of the 8 channels broadcast its weight and do "
        "3 multiply-adds (24 in all).",
        "Each register is 16 rows of one output channel, the output's own layout: the sums are "
        "added straight into the output,",
        "with no 16 x 16 transposition and no buffer. Stride 1 needs no split: the rows are "
        "consecutive in the column as it is.",
        "The last register of a column may be partial (65 rows = 48 + 17): masked loads and "
        "stores. Same sums, same order: same bits.",
    ]
    svg.lines(470, 478, notes)
    return svg.render()


def tokenize(statement):
    """The lexer's rule for this figure's alphabet: (text, TokenType, start, end)."""
    tokens, i = [], 0
    simple = {"(": "kLeftBracket", ")": "kRightBracket", ",": "kComma"}
    while i < len(statement):
        ch = statement[i]
        if ch in simple:
            tokens.append((ch, simple[ch], i, i + 1))
            i += 1
        elif ch == "@":
            m = re.match(r"@\d+", statement[i:])
            tokens.append((m.group(0), "kInput", i, i + len(m.group(0))))
            i += len(m.group(0))
        else:
            m = re.match(r"[a-z]+", statement[i:])
            tokens.append((m.group(0), FUNCTIONS[m.group(0)], i, i + len(m.group(0))))
            i += len(m.group(0))
    return tokens


def parse(tokens, index=0):
    """Recursive descent, as ExpressionParser::ParseExpression: (node, next index)."""
    text = tokens[index][0]
    if text.startswith("@"):
        return {"text": text, "children": []}, index + 1
    children = []
    index += 1  # the function; then '('
    node, index = parse(tokens, index + 1)
    children.append(node)
    if text not in UNARY:
        node, index = parse(tokens, index + 1)  # after ','
        children.append(node)
    return {"text": text, "children": children}, index + 1  # after ')'


def post_order(node):
    return [n for child in node["children"] for n in post_order(child)] + [node]


def expression_tree():
    statement = "add(mul(@0,@1),sin(@2))"
    tokens = tokenize(statement)
    root, end = parse(tokens)
    assert end == len(tokens)
    rpn = post_order(root)
    # What course7_expression/test/test_sin.cpp asserts of the engine.
    assert [t[1] for t in tokens] == [
        "kAdd", "kLeftBracket", "kMul", "kLeftBracket", "kInput", "kComma", "kInput",
        "kRightBracket", "kComma", "kSin", "kLeftBracket", "kInput", "kRightBracket",
        "kRightBracket"]
    assert tokens[9][2] == 15
    assert " ".join(n["text"] for n in rpn) == "@0 @1 mul @2 sin add"

    svg = Svg(940, 560, "Tokens, syntax tree and reverse Polish of add(mul(@0,@1),sin(@2))")
    svg.text(470, 26, f'ExpressionParser("{statement}")', 16, mono=True, bold=True)
    # 1. Tokens.
    svg.text(20, 60, f"1. Tokenize(): {len(tokens)} tokens (text, TokenType, "
             "[start_pos, end_pos))", 13,
             anchor="start", bold=True)
    tw = 64
    for i, (text, kind, start, stop) in enumerate(tokens):
        x = 20 + i * tw
        fill, stroke = ((BLUE, BLUE_D) if kind in FUNCTIONS.values() else
                        (GREEN, GREEN_D) if kind == "kInput" else (GREY, GREY_D))
        if kind == "kSin":
            fill, stroke = ORANGE, ORANGE_D
        svg.rect(x, 72, tw - 4, 62, fill, stroke, rx=4)
        svg.text(x + (tw - 4) / 2, 94, text, 15, mono=True, bold=True)
        svg.text(x + (tw - 4) / 2, 112, kind, min(9, round((tw - 6) / (CHAR_W * len(kind)), 1)),
                 mono=True)
        svg.text(x + (tw - 4) / 2, 127, f"[{start},{stop})", 9, mono=True, fill=GREY_D)
    # 2. The tree, with the post-order number of each node.
    svg.text(20, 170, "2. Generate(): the syntax tree (a call's arguments, in the order written, "
             "are its children)", 13, anchor="start", bold=True)
    rank = {id(n): i for i, n in enumerate(rpn)}
    place = {id(root): (300, 210)}
    place[id(root["children"][0])] = (170, 300)
    place[id(root["children"][1])] = (430, 300)
    place[id(root["children"][0]["children"][0])] = (100, 390)
    place[id(root["children"][0]["children"][1])] = (240, 390)
    place[id(root["children"][1]["children"][0])] = (380, 390)
    for node in rpn:
        for side, child in zip(("[0]", "[1]"), node["children"]):
            (x1, y1), (x2, y2) = place[id(node)], place[id(child)]
            svg.line(x1, y1 + 18, x2, y2 - 18, GREY_D, 1.5, arrow=True)
            svg.text((x1 + x2) / 2 + (-26 if side == "[0]" else 26), (y1 + y2) / 2 + 4, side,
                     10, italic=True, fill=GREY_D)
    for node in rpn:
        x, y = place[id(node)]
        leaf = not node["children"]
        fill, stroke = (GREEN, GREEN_D) if leaf else (BLUE, BLUE_D)
        if node["text"] == "sin":
            fill, stroke = ORANGE, ORANGE_D
        svg.rect(x - 32, y - 18, 64, 36, fill, stroke, 1.5, rx=18)
        svg.text(x, y + 6, node["text"], 15, mono=True, bold=True)
        svg.text(x + 40, y - 12, rank[id(node)] + 1, 10, bold=True, fill=RED_D)
    svg.text(300, 440, "red numbers: the post-order (arguments before their function)", 11,
             fill=RED_D)
    # 3. Reverse Polish, evaluated on a stack.
    svg.text(580, 200, "3. ReversePolish() and a stack", 13, anchor="start", bold=True)
    svg.text(580, 218, "evaluating it (EvaluateReversePolish)", 13, anchor="start", bold=True)
    stack = []
    for i, node in enumerate(rpn):
        y = 236 + i * 36
        text = node["text"]
        fill, stroke = (GREEN, GREEN_D) if not node["children"] else (BLUE, BLUE_D)
        if text == "sin":
            fill, stroke = ORANGE, ORANGE_D
        svg.text(574, y + 20, i + 1, 10, anchor="end", bold=True, fill=RED_D)
        svg.rect(580, y, 50, 28, fill, stroke, rx=4)
        svg.text(605, y + 19, text, 13, mono=True, bold=True)
        if node["children"]:
            args = stack[len(stack) - len(node["children"]):]
            del stack[len(stack) - len(node["children"]):]
            stack.append(f"{text}({','.join(args)})")
            action = f"pop {len(args)}, push"
        else:
            stack.append(text)
            action = "push"
        svg.text(640, y + 19, action, 10, anchor="start", fill=GREY_D)
        svg.text(720, y + 19, "[" + ", ".join(stack) + "]", 10, anchor="start", mono=True)
    svg.text(470, 500, "reverse Polish: " + " ".join(n["text"] for n in rpn), 15, mono=True,
             bold=True)
    svg.text(470, 525, "the stack ends with one entry, the result: " + stack[0], 12, mono=True)
    svg.text(470, 546, "course 7: the call rule of any arity (ParseCall), the stack machine "
             "(EvaluateReversePolish), and sin and cos (ClassifyWord, TensorElementTrig)", 11,
             fill=ORANGE_D)
    return svg.render()


# ---------------------------------------------------------------------------
FIGURES = [  # (path, function, needs the kuiper CLI)
    ("course1_tensor/figures/fcube_layout.svg", fcube_layout, False),
    ("course2_padding/figures/flatten_orders.svg", flatten_orders, False),
    ("course2_padding/figures/padding.svg", padding, False),
    ("course3_graph/figures/pnnx_line.svg", pnnx_line, False),
    ("course3_graph/figures/graph.svg", "models/fixtures/tiny_net.pnnx.param", True),
    ("course4_topo/figures/kahn_steps.svg", kahn_steps, False),
    ("course5_layers/figures/registry.svg", registry, False),
    ("course6_conv/figures/im2col_groups.svg", im2col_groups, False),
    ("course6_conv/figures/winograd_gemms.svg", winograd_gemms, False),
    ("course6_conv/figures/direct_tile.svg", direct_tile, False),
    ("course6_conv/figures/column_tile.svg", column_tile, False),
    ("course7_expression/figures/expression_tree.svg", expression_tree, False),
    ("final_project/figures/resnet18_graph.svg", "models/fixtures/resnet18.pnnx.param", True),
]


def default_kuiper():
    for preset in ("solutions", "student"):
        path = os.path.join(ROOT, "build", preset, "bin", "kuiper")
        if os.path.exists(path):
            return path
    return None


def write_all(out_dir, kuiper, skip_kuiper):
    written = []
    for path, make, needs_kuiper in FIGURES:
        if needs_kuiper:
            if skip_kuiper:
                continue
            compact = "resnet18" in path
            text = render_dot(graph_dot(kuiper, os.path.join(ROOT, make), compact))
        else:
            text = make()
        target = os.path.join(out_dir, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        written.append(path)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=ROOT, help="write under this folder (default: the "
                        "repository)")
    parser.add_argument("--check", action="store_true", help="regenerate into a temporary "
                        "folder and compare byte for byte with the committed figures")
    parser.add_argument("--kuiper", help="the kuiper CLI (default: build/solutions/bin/kuiper); "
                        "it must have course 3 done")
    parser.add_argument("--skip-kuiper", action="store_true", help="leave out the figures "
                        "drawn from `kuiper graph --dot`")
    args = parser.parse_args()
    kuiper = args.kuiper or default_kuiper()
    if not args.skip_kuiper:
        if kuiper is None or not os.path.exists(kuiper):
            sys.exit("make_figures: no kuiper CLI: build it (cmake --build --preset solutions "
                     "--target kuiper_cli), pass --kuiper PATH, or --skip-kuiper")
        if shutil.which("dot") is None:
            sys.exit("make_figures: Graphviz `dot` is missing (apt-get install graphviz)")
    if not args.check:
        for path in write_all(args.out, kuiper, args.skip_kuiper):
            size = os.path.getsize(os.path.join(args.out, path))
            print(f"{path}  {size} bytes")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        written = write_all(tmp, kuiper, args.skip_kuiper)
        differing = [p for p in written
                     if not os.path.exists(os.path.join(ROOT, p))
                     or not filecmp.cmp(os.path.join(tmp, p), os.path.join(ROOT, p),
                                        shallow=False)]
    if differing:
        print("make_figures --check: these figures differ from what the script writes "
              "(regenerate with /usr/bin/python3 tools/make_figures.py and commit):")
        for path in differing:
            print(f"  {path}")
        return 1
    print(f"make_figures --check: {len(written)} figures are identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
