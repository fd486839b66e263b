//! The HTML memo's helpers: escaping, the words files' inline Markdown marks as HTML, and charts as inline SVG.
//!
//! The HTML memo (`templates/memo.html.j2`) calls the same words macros as the Markdown memo.
//! minijinja runs a macro with its caller's auto-escaping, so inside the HTML memo every value a
//! macro prints is HTML-escaped; the `md` and `cell` filters, which backslash-escape user text
//! for Markdown, here escape it for HTML instead and also turn `*` and `` ` `` into character
//! references, so user text can never form a mark. What is left of Markdown in a macro's output
//! is the words files' own `**bold**` and `` `code` ``, which [`marks`] turns into tags.
//!
//! The charts are drawn here, not with a plotting crate: two straight lines and a point need a
//! hundred lines of SVG text, and a crate with an SVG backend would bring fonts and a layout
//! engine for nothing. Every label comes from the words files; nothing of the policy is here.

use std::fmt::Write as _;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, State};

/// Adds the HTML memo's filters and functions to `env`: `md` and `cell` that escape for the
/// output at hand, `marks`, and `line_chart`.
pub fn register(env: &mut Environment<'static>) {
    env.add_filter("md", md);
    env.add_filter("cell", cell);
    env.add_filter("marks", marks);
    env.add_function("line_chart", line_chart);
}

/// Whether `state` renders HTML (a `.html.j2` template, or a macro it calls).
fn is_html(state: &State) -> bool {
    matches!(state.auto_escape(), AutoEscape::Html)
}

/// `text` with `&`, `<`, `>`, `"`, `'` and `/` as character references, as minijinja's
/// auto-escaping writes them.
#[must_use]
pub fn escape(text: &str) -> String {
    minijinja::HtmlEscape(text).to_string()
}

/// User text for HTML: escaped, on one line, and with the characters of the words files'
/// marks (`*`, `` ` ``) as character references so that [`marks`] leaves them alone.
fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in escape(text).chars() {
        match c {
            '*' => out.push_str("&#42;"),
            '`' => out.push_str("&#96;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The `md` filter: Markdown escaping in the Markdown memo, [`inert`] HTML in the HTML memo.
fn md(state: &State, text: &str) -> Value {
    if is_html(state) {
        Value::from_safe_string(inert(text))
    } else {
        Value::from(crate::expr::md_escape(text))
    }
}

/// The `cell` filter: a Markdown table cell in the Markdown memo, escaped HTML on one line in
/// the HTML memo (an HTML cell needs no escaping of `|`). Its text is the policy's (an outcome,
/// a memory note, a trace step's reason), written with the same `` `code` `` and `**bold**`
/// marks as the Markdown memo shows, so [`marks`] may still turn them into tags; user text goes
/// through `md` instead, which leaves no mark for `marks` to find.
fn cell(state: &State, text: &str) -> Value {
    if is_html(state) {
        Value::from_safe_string(escape(text).replace(['\n', '\r'], " "))
    } else {
        Value::from(crate::expr::table_cell(text))
    }
}

/// The `marks` filter: a words macro's output as HTML. Text not yet escaped (a plain string) is
/// escaped first; then each `` `code` `` becomes `<code>` and each `**bold**` `<strong>`. A
/// mark without its closing twin stays as it is.
fn marks(value: &Value) -> Value {
    let text = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    let html = if value.is_safe() { text } else { escape(&text) };
    Value::from_safe_string(inline(&html))
}

/// [`marks`] on escaped HTML.
fn inline(html: &str) -> String {
    let mut out = String::with_capacity(html.len() + 16);
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        if c == '`'
            && let Some(end) = rest[1..].find('`')
        {
            let _ = write!(out, "<code>{}</code>", &rest[1..=end]);
            rest = &rest[end + 2..];
        } else if rest.starts_with("**")
            && let Some(end) = rest[2..].find("**").filter(|&e| e > 0)
        {
            let _ = write!(out, "<strong>{}</strong>", inline(&rest[2..end + 2]));
            rest = &rest[end + 4..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// What `line_chart` draws: lines over shared x values and one marked point. Labels are HTML.
#[derive(Debug)]
struct Chart {
    title: String,
    x_axis: String,
    y_axis: String,
    xs: Vec<f64>,
    lines: Vec<(String, Vec<f64>)>,
    point: Option<(f64, f64, String)>,
}

fn chart_error(what: &str) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!("line_chart: {what}"),
    )
}

/// The field `key` of `map`, which must be there.
fn field(map: &Value, key: &str) -> Result<Value, minijinja::Error> {
    map.get_attr(key)
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_none())
        .ok_or_else(|| chart_error(&format!("`{key}` is missing")))
}

/// A label as HTML: a safe string (a macro's output in the HTML memo) as it is, any other value
/// escaped.
fn label(value: &Value) -> String {
    let text = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    if value.is_safe() { text } else { escape(&text) }
}

/// A list of finite numbers.
fn numbers(value: &Value, key: &str) -> Result<Vec<f64>, minijinja::Error> {
    let bad = || chart_error(&format!("`{key}` must be a list of numbers"));
    value
        .try_iter()
        .map_err(|_| bad())?
        .map(|v| {
            f64::try_from(v)
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(bad)
        })
        .collect()
}

impl Chart {
    fn read(map: &Value) -> Result<Self, minijinja::Error> {
        let xs = numbers(&field(map, "xs")?, "xs")?;
        let mut lines = Vec::new();
        for line in field(map, "lines")?.try_iter()? {
            let ys = numbers(&field(&line, "ys")?, "ys")?;
            if ys.len() != xs.len() {
                return Err(chart_error("every line needs a y value for each x value"));
            }
            lines.push((label(&field(&line, "label")?), ys));
        }
        let point = match map.get_attr("point")? {
            p if p.is_undefined() || p.is_none() => None,
            p => {
                let x = numbers(
                    &Value::from(vec![field(&p, "x")?, field(&p, "y")?]),
                    "point",
                )?;
                Some((x[0], x[1], label(&field(&p, "label")?)))
            }
        };
        if xs.len() < 2 || lines.is_empty() {
            return Err(chart_error("needs two x values and a line at least"));
        }
        if xs[xs.len() - 1] <= xs[0] {
            return Err(chart_error("the x values must rise"));
        }
        Ok(Chart {
            title: label(&field(map, "title")?),
            x_axis: label(&field(map, "x_axis")?),
            y_axis: label(&field(map, "y_axis")?),
            xs,
            lines,
            point,
        })
    }
}

const WIDTH: f64 = 680.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 100.0;
/// Each line's stroke: colour and dash, told apart in black and white too.
const STROKES: &[(&str, &str)] = &[
    ("#1f5fa8", ""),
    ("#c0561b", " stroke-dasharray=\"8 5\""),
    ("#2e7d32", " stroke-dasharray=\"2 4\""),
];

/// The `line_chart` function: `chart` (a map: `title`, `x_axis`, `y_axis`, `xs`, `lines` of
/// `label` and `ys`, an optional `point` of `x`, `y` and `label`) as an inline SVG, a safe string.
fn line_chart(chart: &Value) -> Result<Value, minijinja::Error> {
    let chart = Chart::read(chart)?;
    let (x0, x1) = (chart.xs[0], chart.xs[chart.xs.len() - 1]);
    let y_top = chart
        .lines
        .iter()
        .flat_map(|(_, ys)| ys.iter())
        .chain(chart.point.iter().map(|p| &p.1))
        .fold(0.0_f64, |a, &b| a.max(b));
    let (step, y1) = nice_axis(y_top);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * plot_w;
    let py = |y: f64| TOP + plot_h - y / y1 * plot_h;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{title}\">\n<title>{title}</title>\n<text class=\"chart-title\" x=\"{cx}\" y=\"22\" text-anchor=\"middle\">{title}</text>\n",
        title = chart.title,
        cx = LEFT + plot_w / 2.0,
    );
    // The y axis: a grid line and a label per step.
    let mut y = 0.0;
    while y <= y1 + step / 2.0 {
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{x2}\" y2=\"{py:.1}\"/><text class=\"tick\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{label}</text>",
            py = py(y),
            x2 = WIDTH - RIGHT,
            tx = LEFT - 6.0,
            ty = py(y) + 4.0,
            label = crate::expr::group_thousands(y, 0),
        );
        y += step;
    }
    // The x axis: a tick and a label per x value.
    for &x in &chart.xs {
        let _ = writeln!(
            s,
            "<line class=\"axis\" x1=\"{px:.1}\" y1=\"{y0}\" x2=\"{px:.1}\" y2=\"{y5}\"/><text class=\"tick\" x=\"{px:.1}\" y=\"{ty}\" text-anchor=\"middle\">{label}</text>",
            px = px(x),
            y0 = TOP + plot_h,
            y5 = TOP + plot_h + 5.0,
            ty = TOP + plot_h + 20.0,
            label = crate::expr::group_thousands(x, 0),
        );
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b}\"/>",
        b = TOP + plot_h,
        r = WIDTH - RIGHT,
    );
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{cx}\" y=\"{y}\" text-anchor=\"middle\">{label}</text>",
        cx = LEFT + plot_w / 2.0,
        y = TOP + plot_h + 40.0,
        label = chart.x_axis,
    );
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"0\" y=\"0\" text-anchor=\"middle\" transform=\"translate(16 {cy}) rotate(-90)\">{label}</text>",
        cy = TOP + plot_h / 2.0,
        label = chart.y_axis,
    );
    plot(&mut s, &chart, &px, &py);
    s.push_str("</svg>");
    Ok(Value::from_safe_string(s))
}

/// The lines of `chart` with their legend under the x axis label, and the marked point.
fn plot(s: &mut String, chart: &Chart, px: &dyn Fn(f64) -> f64, py: &dyn Fn(f64) -> f64) {
    let (x0, x1) = (chart.xs[0], chart.xs[chart.xs.len() - 1]);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    for (i, (name, ys)) in chart.lines.iter().enumerate() {
        let (colour, dash) = STROKES[i % STROKES.len()];
        let points: Vec<String> = chart
            .xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2.5\"{dash} points=\"{}\"/>",
            points.join(" ")
        );
        let ly = TOP + plot_h + 60.0 + 18.0 * f64::from(u8::try_from(i).unwrap_or(u8::MAX));
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{ly}\" x2=\"{x2}\" y2=\"{ly}\" stroke=\"{colour}\" stroke-width=\"2.5\"{dash}/><text class=\"legend\" x=\"{tx}\" y=\"{ty}\">{label}</text>",
            x2 = LEFT + 28.0,
            tx = LEFT + 36.0,
            ty = ly + 4.0,
            label = name,
        );
    }
    if let Some((x, y, name)) = &chart.point {
        let (cx, cy) = (px(x.clamp(x0, x1)), py(*y));
        let anchor = if cx > LEFT + plot_w * 0.6 {
            "end"
        } else {
            "start"
        };
        let tx = if anchor == "end" {
            cx - 10.0
        } else {
            cx + 10.0
        };
        let _ = writeln!(
            s,
            "<circle class=\"point\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5.5\"/><text class=\"point-label\" x=\"{tx:.1}\" y=\"{ty:.1}\" text-anchor=\"{anchor}\">{label}</text>",
            ty = cy - 10.0,
            label = name,
        );
    }
}

/// A step of 1, 2, 2.5 or 5 × 10ⁿ giving four to eight grid lines up to at least `top`, and the
/// axis's end (a multiple of the step).
fn nice_axis(top: f64) -> (f64, f64) {
    if top <= 0.0 {
        return (1.0, 1.0);
    }
    let rough = top / 5.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * magnitude);
    (step, (top / step).ceil() * step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_become_tags_and_escaped_text_stays_text() {
        assert_eq!(
            inline("**Bold:** `id` and a * star"),
            "<strong>Bold:</strong> <code>id</code> and a * star"
        );
        assert_eq!(inline("**a `b` c**"), "<strong>a <code>b</code> c</strong>");
        assert_eq!(inline("unclosed ` and **"), "unclosed ` and **");
        assert_eq!(
            inline(&inert("**<b>** `x`")),
            "&#42;&#42;&lt;b&gt;&#42;&#42; &#96;x&#96;"
        );
    }

    #[test]
    fn axes_end_on_a_round_number_above_the_top() {
        assert_eq!(nice_axis(347_000.0), (100_000.0, 400_000.0));
        assert_eq!(nice_axis(61.0), (20.0, 80.0));
        assert_eq!(nice_axis(0.0), (1.0, 1.0));
    }
}
