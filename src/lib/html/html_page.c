/* The page's style sheet and script, inline: the page opens from disk with no network. */
#include "html/html.h"

#include <string.h>

void tp_html__text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

const char *tp_html__base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

void tp_html__partial_note(FILE *out, const tp_nccl_profile *p)
{
    if (p->exact)
        return;
    fprintf(out,
            " <span class=\"partial\">The NCCL %s profile is partial: %d of %d public "
            "conformance cases pass, so parts of this page may differ from what NCCL %s does "
            "(<code>topoplan versions</code>).</span>",
            p->version, p->public_passed, p->public_total, p->version);
}

void tp_html__json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static const char style[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "margin:0 auto;padding:12px 20px 40px;max-width:1600px;color:#1b1b1b;background:#fff}\n"
    "h1{font-size:22px;margin:6px 0}h2{font-size:18px;margin:22px 0 8px;border-bottom:1px solid "
    "#ddd;padding-bottom:3px}h3{font-size:15px;margin:12px 0 4px}\n"
    "nav a{margin-right:14px}table{border-collapse:collapse;font-size:13px}\n"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}th{background:#f3f3f3}\n"
    ".summary td:first-child{font-weight:600}table.rings td{font-family:ui-monospace,"
    "monospace;font-size:12px}\n"
    ".controls{margin:6px 0;display:flex;gap:8px;align-items:center;flex-wrap:wrap}\n"
    ".controls select,button{font:inherit;padding:2px 6px}\n"
    ".route{color:#333;font-size:13px}\n"
    ".pic-row{display:flex;gap:12px;align-items:flex-start}\n"
    ".pic{overflow:auto;flex:1 1 auto;border:1px solid #e4e4e4;border-radius:6px;"
    "background:#fcfcfc}\n"
    ".pic svg{display:block;max-width:100%;height:auto}\n"
    ".info{flex:0 0 260px;white-space:pre-line;font-size:13px;background:#f6f8fa;border:1px "
    "solid #e1e4e8;border-radius:6px;padding:8px;min-height:120px}\n"
    "svg.system text{font-size:12px;text-anchor:middle;fill:#111;pointer-events:none}\n"
    "svg.system text.sub{font-size:10px;fill:#555}\n"
    "svg.system text.ord{font-size:12px;font-weight:700;fill:#c25400;text-anchor:end}\n"
    "svg.system .node rect{fill:#fff;stroke:#777;stroke-width:1.2}\n"
    "svg.system .k-GPU rect{fill:#eef3e6;stroke:#4b7f20}\n"
    "svg.system .k-NVS rect{fill:#e6f2ea;stroke:#2e8b57}\n"
    "svg.system .k-CPU rect{fill:#f2ecf7;stroke:#7a4f9a}\n"
    "svg.system .k-NET rect{fill:#f1f1f1;stroke:#555}\n"
    "svg.system .k-PCI rect,svg.system .k-NIC rect{fill:#eef2fb;stroke:#4169e1}\n"
    "svg.system .node:focus{outline:none}svg.system .node:focus rect,svg.system .node:hover "
    "rect{stroke:#000;stroke-width:2.5}\n"
    "svg.system .node.on rect{stroke:#e8590c;stroke-width:2.5}\n"
    "svg.system .link path{fill:none;stroke-linecap:round;opacity:.8}\n"
    "svg.system .t-NVL path{stroke:#2e8b57}svg.system .t-PCI path{stroke:#4169e1}\n"
    "svg.system .t-SYS path{stroke:#b22222}svg.system .t-NET path{stroke:#666}\n"
    "svg.system .t-LOC path{stroke:#999}\n"
    "svg.system.has-route .link path{opacity:.18}\n"
    "svg.system .link.on path{stroke:#e8590c;opacity:1}\n"
    "svg.system .link:hover path{opacity:1;stroke-width:7}\n"
    "svg.system .link.bound path{stroke:#d00;opacity:1;stroke-dasharray:7 4;stroke-width:7}\n"
    "svg.system .node.bound rect{stroke:#d00;stroke-width:3.5}\n"
    "svg.system .link.changed path{stroke:#c2185b;opacity:1;stroke-dasharray:2 5;"
    "stroke-width:6}\n"
    "svg.system .node.changed rect{stroke:#c2185b;stroke-width:3;stroke-dasharray:4 2}\n"
    ".sw.changed{background:repeating-linear-gradient(90deg,#c2185b 0 3px,transparent 3px "
    "6px)}\n.sev-ERROR{color:#b00020;font-weight:700}.sev-WARN{color:#a15c00;font-weight:700}"
    ".sev-INFO{color:#555}\n"
    "svg.system .numa rect{fill:#f6f1fb;stroke:#d9cde6}\n"
    "svg.system .numa.n1 rect{fill:#fcf6e8;stroke:#eadbb5}\n"
    "svg.system .numa text{font-size:10px;fill:#7a4f9a;text-anchor:start}\n"
    "svg.system .numa.n1 text{fill:#8a6a1a}\n"
    ".legend{font-size:12px;color:#444}.sw{display:inline-block;width:18px;height:4px;"
    "margin:0 4px 2px 10px;vertical-align:middle}\n"
    ".sw.NVL{background:#2e8b57}.sw.PCI{background:#4169e1}.sw.SYS{background:#b22222}"
    ".sw.NET{background:#666}.sw.on{background:#e8590c}.sw.bound{background:repeating-linear-"
    "gradient(90deg,#d00 0 6px,transparent 6px 9px)}\n"
    ".why{border-left:3px solid #ddd;padding-left:10px;margin:8px 0}.why ol{margin:4px 0;"
    "padding-left:22px}.why li{margin:2px 0}\n"
    "button.bound{border:1px solid #d00;background:#fff5f5;border-radius:4px;cursor:pointer;"
    "margin:2px 0}\n"
    ".heats{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-start}\n"
    ".heat td{text-align:center;min-width:38px;font-size:12px}.heat td small{display:block;"
    "color:#333;font-size:10px}\n"
    ".p-NVL{background:#b7e4c7}.p-NVB{background:#d8f3dc}.p-PIX{background:#cfe2ff}"
    ".p-PXB{background:#e0eaff}.p-PXN{background:#fff3bf}.p-PHB{background:#ffe5b4}"
    ".p-SYS{background:#ffc9c9}.p-NET{background:#eee}.p-DIS{background:#ccc}"
    ".p-LOC{background:#fff}\n"
    ".tune svg{max-width:100%;height:auto;border:1px solid #e4e4e4;border-radius:6px}\n"
    "table.sizes td,table.sizes th{white-space:nowrap}table.sizes small{color:#555}.tune "
    "text{font-size:12px}.tune text.choice{paint-order:stroke;stroke:#fff;stroke-width:3px;"
    "stroke-linejoin:round}.tune .grid{stroke:#eee}.tune "
    ".axis{stroke:#888}\n"
    ".kinds{display:flex;gap:16px;flex-wrap:wrap}.kinds>section{flex:1 1 600px;min-width:0}\n"
    ".kinds .pic-row{flex-direction:column;align-items:stretch}.kinds .info{flex:none;"
    "min-height:60px}.kinds h2{font-size:16px;overflow-wrap:anywhere}\n"
    ".partial{color:#a15c00;font-weight:600}h1 .nccl{font-size:14px;font-weight:600;"
    "color:#fff;background:#245;border-radius:4px;padding:2px 6px;vertical-align:middle}\n"
    "table.cost{margin:8px 0}table.cost caption{text-align:left;font-weight:600;padding:2px 0}"
    "table.cost td small{display:block;color:#555}"
    "table.cost td.bad{background:#ffe3e3}table.cost td.bad small{color:#b00020;font-weight:700}\n"
    ".limits td.bad{background:#ffe3e3;font-weight:600}.note{color:#555;font-size:13px}\n"
    "details{margin:6px 0}summary{cursor:pointer;color:#245}\n"
    "@media print{.controls,button{display:none}}\n";

/* Picking, hovering, the bounding-link buttons and the collective picker. */
static const char script[] =
    "(function(){'use strict';\n"
    "function all(s,r){return Array.prototype.slice.call((r||document).querySelectorAll(s));}\n"
    "function byId(i){return document.getElementById(i);}\n"
    "var views={};\n"
    "all('section.sysview').forEach(function(v){\n"
    " var id=v.id,svg=v.querySelector('svg.system'),info=byId(id+'-info'),"
    "route=byId(id+'-route'),pick=byId(id+'-pick');\n"
    " var data=JSON.parse(byId(id+'-routes').textContent);\n"
    " function clear(c){all('.'+c,svg).forEach(function(e){e.classList.remove(c);});}\n"
    " function show(key){clear('on');clear('bound');"
    "all('text.ord',svg).forEach(function(t){t.textContent='';});\n"
    "  var r=data[key];svg.classList.toggle('has-route',!!r);svg.setAttribute('data-shown',key);\n"
    "  if(!r){route.textContent='Every link; pick a channel or a pattern to follow it.';"
    "return;}\n"
    "  r.links.forEach(function(l){var e=byId(id+'-l'+l);if(e)e.classList.add('on');});\n"
    "  r.seq.forEach(function(n,i){var e=byId(id+'-n'+n);if(!e)return;e.classList.add('on');\n"
    "   var t=e.querySelector('text.ord');if(t&&t.textContent==='')t.textContent=String(i);});\n"
    "  route.textContent=r.text;}\n"
    " function bound(graph,links,nodes){clear('bound');"
    "if(graph&&pick.querySelector('option[value=\"'+graph+'\"]')){pick.value=graph;show(graph);}\n"
    "  links.forEach(function(l){var e=byId(id+'-l'+l);if(e)e.classList.add('bound');});\n"
    "  nodes.forEach(function(n){var e=byId(id+'-n'+n);if(e)e.classList.add('bound');});\n"
    "  svg.scrollIntoView({block:'nearest'});}\n"
    " pick.addEventListener('change',function(){show(pick.value);});\n"
    " all('.node,.link',svg).forEach(function(e){function f(){info.textContent="
    "e.getAttribute('data-info');}\n"
    "  e.addEventListener('mouseenter',f);e.addEventListener('focus',f);});\n"
    " views[id]={show:show,bound:bound};show(pick.value);});\n"
    "all('button.bound').forEach(function(b){b.addEventListener('click',function(){\n"
    " var v=views[b.getAttribute('data-view')];if(!v)return;\n"
    " function ints(a){return (b.getAttribute(a)||'').split(' ').map(Number)"
    ".filter(function(x){return x>=0;});}\n"
    " v.bound(b.getAttribute('data-graph'),ints('data-links'),ints('data-nodes'));});});\n"
    "all('button.finding').forEach(function(b){b.addEventListener('click',function(){\n"
    " var labels=b.getAttribute('data-labels').split(' ');\n"
    " Object.keys(views).forEach(function(id){var v=byId(id),nodes=[],links=[];\n"
    "  all('.node',v).forEach(function(n){if(labels.indexOf(n.getAttribute('data-nccl'))>=0)"
    "nodes.push(Number(n.id.slice(id.length+2)));});\n"
    "  all('.link',v).forEach(function(l){var e=l.getAttribute('data-ends').split(' ')"
    ".map(Number);if(nodes.indexOf(e[0])>=0&&nodes.indexOf(e[1])>=0)"
    "links.push(Number(l.id.slice(id.length+2)));});\n"
    "  views[id].bound('',links,nodes);});});});\n"
    "var coll=byId('tune-pick');\n"
    "if(coll){var f=function(){all('.tune-panel').forEach(function(p){"
    "p.hidden=p.getAttribute('data-coll')!==coll.value;});};"
    "coll.addEventListener('change',f);f();}\n"
    "document.documentElement.setAttribute('data-ready','1');\n"
    "})();\n";

void tp_html__style(FILE *out)
{
    fputs("<style>\n", out);
    fputs(style, out);
    fputs("</style>\n", out);
}

void tp_html__script(FILE *out)
{
    fputs("<script>\n", out);
    fputs(script, out);
    fputs("</script>\n", out);
}
