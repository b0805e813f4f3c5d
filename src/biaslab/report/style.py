"""The CSS the report pages share (report.html, the plain tables pages), and the colours of their figures.

One meaning per colour on every page: red marks a result that passes its test (q < 0.05), grey one too
small to interpret (no interval), blue everything else; the figures use the same three colours
(:data:`RED`, :data:`GREY`, :data:`BLUE`) and each table or figure that uses them says so in a legend.

Tables fit any width: at 640 px and below a table of class ``rf`` reflows into one card per row, each
cell under its column's name (its ``data-label``); cells of class ``lead`` or ``wide`` take a line of their
own. Any other table too wide for its card scrolls inside the card, never past the page.
"""

from __future__ import annotations

RED = "#c0392b"  # q < 0.05
GREY = "#9aa0a8"  # too small to interpret
BLUE = "#3b6ea8"  # the estimate, nothing to flag
PURPLE = "#7b5ea7"  # the other direction, where a figure shows two (never red: red is kept for q < 0.05)
INK = "#1d2330"  # reference lines and fits

# A table of class ``rf`` on a narrow screen (inside a media query): one card per row (the report card of a suite
# uses it too, with its own page's styles)
REFLOW = """
  table.rf,table.rf tbody,table.rf tr,table.rf td{display:block;width:auto}
  table.rf thead{display:none}
  table.rf tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 18px;padding:8px 2px;
              border-bottom:1px solid #e1e4ea}
  table.rf td{border:0;padding:0;text-align:left}
  table.rf td[data-label]::before{content:attr(data-label);display:block;font-size:.78em;color:#5f6672;
                                  font-weight:400}
  table.rf td.lead,table.rf td.wide{flex:1 1 100%}
  table.rf td.lead::before{display:none}
  table.rf tr.flag{background:#f1f2f4}
  table.rf tr.flag>td{background:none}
  table.rf td:empty{display:none}
"""

CSS = (
    """
 *,*::before,*::after{box-sizing:border-box}
 body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
 main{max-width:1040px;margin:0 auto;padding:24px}
 h1{font-size:1.6em;line-height:1.25;margin:.2em 0;overflow-wrap:anywhere}
 h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #dde1e7;padding-bottom:4px}
 h3{font-size:1.05em;margin:.4em 0}
 .meta{color:#5a6270;font-size:.92em;overflow-wrap:anywhere}
 .card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:14px 18px;margin:12px 0;overflow-x:auto}
 table{border-collapse:collapse;width:100%;font-size:.93em}
 th,td{padding:6px 8px;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
 td{overflow-wrap:anywhere}
 td.lead{overflow-wrap:break-word}
 th{background:#f0f2f5;font-weight:600}
 td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
 th.num{white-space:normal;overflow-wrap:normal;hyphens:manual}
 .ci{color:#5f6672}
 .sig{color:#b03a2e;font-weight:600}
 tr.flag>td{background:#f1f2f4;color:#5f6672}
 .key{font-size:.88em;color:#5a6270;margin:.5em 0 0}
 .key span{white-space:nowrap;margin-right:1em}
 .sw{display:inline-block;width:.85em;height:.85em;border-radius:2px;vertical-align:-1px;margin-right:4px}
 .sw.red{background:#c0392b} .sw.grey{background:#9aa0a8} .sw.blue{background:#3b6ea8}
 .sw.row{background:#f1f2f4;border:1px solid #d5d8de}
 img,svg{max-width:100%;height:auto}
 pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fafbfc;border:1px solid #eceef2;border-radius:6px;
     padding:10px;max-height:320px;overflow:auto;font-size:.88em}
 .tag{display:inline-block;background:#eef2f8;border-radius:4px;padding:1px 6px;margin:1px 6px 1px 0;font-size:.85em;
      overflow-wrap:anywhere}
 details summary{cursor:pointer;color:#3b6ea8}
 @media (max-width:640px){
  body{font-size:14px}
  main{padding:12px}
  .card{padding:10px 12px}
  h1{font-size:1.3em}
"""
    + REFLOW
    + """ }
"""
)
