//! The HTML memo's charts as inline SVG: the break-even lines (`line_chart`) and the job's days
//! against its bill (`scatter_chart`).
//!
//! They are drawn here, not with a plotting crate: a few lines, points and labels need a couple
//! of hundred lines of SVG text, and a crate with an SVG backend would bring fonts and a layout
//! engine for nothing. Every label comes from the words files (HTML already: a macro's output,
//! or escaped here); nothing of the policy is here. Both charts share one frame: a title, round
//! ticks on a y axis from zero, axis labels, and a legend under the plot that tells the series
//! or points apart in black and white as well as in colour.

use std::fmt::Write as _;

use decide_lang::Value;

use super::escape;

const WIDTH: f64 = 680.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 100.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;
/// Each line's stroke: colour and dash, told apart in black and white too.
const STROKES: &[(&str, &str)] = &[
    ("#1f5fa8", ""),
    ("#c0561b", " stroke-dasharray=\"8 5\""),
    ("#2e7d32", " stroke-dasharray=\"2 4\""),
];
/// The marks a scatter point may carry, as CSS classes of `memo.html.j2`.
const MARKS: &[&str] = &["chosen", "option", "out"];

fn chart_error(chart: &str, what: &str) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!("{chart}: {what}"),
    )
}

/// The field `key` of `map`, which must be there.
fn field(chart: &str, map: &Value, key: &str) -> Result<Value, minijinja::Error> {
    Some(map.get_attr(key))
        .filter(|v| !v.is_undefined() && !v.is_none())
        .ok_or_else(|| chart_error(chart, &format!("`{key}` is missing")))
}

/// The field `key` of `map` if it is there and not `none`.
fn optional(map: &Value, key: &str) -> Option<Value> {
    Some(map.get_attr(key)).filter(|v| !v.is_undefined() && !v.is_none())
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
fn numbers(chart: &str, value: &Value, key: &str) -> Result<Vec<f64>, minijinja::Error> {
    let bad = || chart_error(chart, &format!("`{key}` must be a list of numbers"));
    value
        .try_iter()
        .ok_or_else(bad)?
        .map(|v| v.as_number().filter(|n| n.is_finite()).ok_or_else(bad))
        .collect()
}

/// The fields `x` and `y` of `map`, finite numbers.
fn xy(chart: &str, map: &Value, key: &str) -> Result<(f64, f64), minijinja::Error> {
    let both = numbers(
        chart,
        &Value::from(vec![field(chart, map, "x")?, field(chart, map, "y")?]),
        key,
    )?;
    Ok((both[0], both[1]))
}

/// A chart's plot area and its two linear scales, with the y axis from zero.
struct Frame {
    height: f64,
    x0: f64,
    x1: f64,
    y1: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * PLOT_W
    }

    fn py(&self, y: f64) -> f64 {
        TOP + PLOT_H - y / self.y1 * PLOT_H
    }

    /// The `<svg>` element's opening, the accessible title and the visible one.
    fn open(&self, s: &mut String, title: &str) {
        let _ = write!(
            s,
            "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"{title}\">\n<title>{title}</title>\n<text class=\"chart-title\" x=\"{cx}\" y=\"22\" text-anchor=\"middle\">{title}</text>\n",
            height = self.height,
            cx = LEFT + PLOT_W / 2.0,
        );
    }

    /// A grid line and a label every `step` up the y axis.
    fn y_grid(&self, s: &mut String, step: f64) {
        let mut y = 0.0;
        while y <= self.y1 + step / 2.0 {
            let _ = writeln!(
                s,
                "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{x2}\" y2=\"{py:.1}\"/><text class=\"tick\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{label}</text>",
                py = self.py(y),
                x2 = WIDTH - RIGHT,
                tx = LEFT - 6.0,
                ty = self.py(y) + 4.0,
                label = decide_lang::group_thousands(y, 0),
            );
            y += step;
        }
    }

    /// A tick and a label (with `decimals`) at each of `xs` on the x axis.
    fn x_ticks(&self, s: &mut String, xs: &[f64], decimals: usize) {
        for &x in xs {
            let _ = writeln!(
                s,
                "<line class=\"axis\" x1=\"{px:.1}\" y1=\"{y0}\" x2=\"{px:.1}\" y2=\"{y5}\"/><text class=\"tick\" x=\"{px:.1}\" y=\"{ty}\" text-anchor=\"middle\">{label}</text>",
                px = self.px(x),
                y0 = TOP + PLOT_H,
                y5 = TOP + PLOT_H + 5.0,
                ty = TOP + PLOT_H + 20.0,
                label = decide_lang::group_thousands(x, decimals),
            );
        }
    }

    /// The two axes and their labels.
    fn axes(s: &mut String, x_axis: &str, y_axis: &str) {
        let _ = writeln!(
            s,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b}\"/>",
            b = TOP + PLOT_H,
            r = WIDTH - RIGHT,
        );
        let _ = writeln!(
            s,
            "<text class=\"axis-label\" x=\"{cx}\" y=\"{y}\" text-anchor=\"middle\">{x_axis}</text>",
            cx = LEFT + PLOT_W / 2.0,
            y = TOP + PLOT_H + 40.0,
        );
        let _ = writeln!(
            s,
            "<text class=\"axis-label\" x=\"0\" y=\"0\" text-anchor=\"middle\" transform=\"translate(16 {cy}) rotate(-90)\">{y_axis}</text>",
            cy = TOP + PLOT_H / 2.0,
        );
    }

    /// The y of the legend's first row, under the x axis label.
    const LEGEND_TOP: f64 = TOP + PLOT_H + 60.0;

    /// Where a label beside the point at `cx` goes: to its right, or to its left near the
    /// right edge.
    fn beside(cx: f64, gap: f64) -> (f64, &'static str) {
        if cx > LEFT + PLOT_W * 0.6 {
            (cx - gap, "end")
        } else {
            (cx + gap, "start")
        }
    }
}

/// What `line_chart` draws: lines over shared x values and one marked point. Labels are HTML.
#[derive(Debug)]
struct LineChart {
    title: String,
    x_axis: String,
    y_axis: String,
    xs: Vec<f64>,
    lines: Vec<(String, Vec<f64>)>,
    point: Option<(f64, f64, String)>,
}

/// The legend's rows under the plot: each row's text wrapped to the width the chart has beside
/// its key (a long label is two lines, not cut at the picture's edge), and where each row goes.
struct Legend {
    /// Per row, its lines (HTML, as given).
    rows: Vec<Vec<String>>,
}

/// The legend's text starts here (after its key) and may run to the chart's right edge.
const LEGEND_TEXT_X: f64 = LEFT + 36.0;
/// The widest a legend line may be, in pixels of the chart's 12-pixel type.
const LEGEND_TEXT_W: f64 = WIDTH - LEGEND_TEXT_X - 8.0;
/// One row's height, and each further line's.
const ROW_H: f64 = 18.0;
const LINE_H: f64 = 15.0;

impl Legend {
    fn new(labels: &[String]) -> Self {
        Legend {
            rows: labels.iter().map(|l| wrap(l, LEGEND_TEXT_W)).collect(),
        }
    }

    /// The y of row `i`'s key and first line.
    fn y(&self, i: usize) -> f64 {
        let mut y = Frame::LEGEND_TOP;
        for row in self.rows.iter().take(i) {
            y += ROW_H + LINE_H * f64::from(u8::try_from(row.len() - 1).unwrap_or(u8::MAX));
        }
        y
    }

    /// The chart's height with every row under the plot.
    fn bottom(&self) -> f64 {
        let last = self.rows.len().saturating_sub(1);
        let lines = self.rows.last().map_or(1, Vec::len);
        self.y(last) + LINE_H * f64::from(u8::try_from(lines - 1).unwrap_or(u8::MAX)) + 22.0
    }

    /// Row `i`'s text element, of `class`, its further lines as `<tspan>`s under the first.
    fn text(&self, i: usize, class: &str) -> String {
        let lines = &self.rows[i];
        let mut out = format!(
            "<text class=\"{class}\" x=\"{LEGEND_TEXT_X}\" y=\"{}\">{}",
            self.y(i) + 4.0,
            lines[0]
        );
        for line in &lines[1..] {
            let _ = write!(
                out,
                "<tspan x=\"{LEGEND_TEXT_X}\" dy=\"{LINE_H}\">{line}</tspan>"
            );
        }
        out.push_str("</text>");
        out
    }
}

/// About how wide `c` is in the chart's 12-pixel type: a Chinese (wide) character a full em,
/// other text a little over half.
fn char_width(c: char) -> f64 {
    if unicode_width::UnicodeWidthChar::width(c) == Some(2) {
        12.0
    } else {
        6.6
    }
}

/// `text` (HTML: tags and entities kept whole, an entity counted as one character) in lines of
/// at most `max` pixels, broken after a space or a wide character.
fn wrap(text: &str, max: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut width = 0.0;
    // Where the line may break (byte offsets in `line`), each with its width there.
    let mut breaks: Vec<(usize, f64)> = Vec::new();
    let (mut in_tag, mut in_entity) = (false, false);
    for c in text.chars() {
        if in_tag || c == '<' {
            in_tag = c != '>';
            line.push(c);
            continue;
        }
        let w = if in_entity { 0.0 } else { char_width(c) };
        // A closing mark never starts a line: no break just before one.
        if "）」』》，。：；、！？)".contains(c)
            && breaks.last().is_some_and(|&(at, _)| at == line.len())
        {
            breaks.pop();
        }
        if width + w > max
            && let Some(&(at, before)) = breaks.last()
        {
            let rest = line.split_off(at);
            lines.push(line.trim_end().to_owned());
            width -= before;
            rest.trim_start().clone_into(&mut line);
            breaks.clear();
        }
        line.push(c);
        width += w;
        match c {
            '&' => in_entity = true,
            ';' if in_entity => in_entity = false,
            _ => {}
        }
        if !in_entity && (c == ' ' || w > 10.0) {
            breaks.push((line.len(), width));
        }
    }
    lines.push(line);
    lines
}

const LINE_CHART: &str = "line_chart";

impl LineChart {
    fn read(map: &Value) -> Result<Self, minijinja::Error> {
        let name = LINE_CHART;
        let xs = numbers(name, &field(name, map, "xs")?, "xs")?;
        let mut lines = Vec::new();
        let list = field(name, map, "lines")?;
        for line in list
            .try_iter()
            .ok_or_else(|| chart_error(name, "`lines` must be a list"))?
        {
            let ys = numbers(name, &field(name, &line, "ys")?, "ys")?;
            if ys.len() != xs.len() {
                return Err(chart_error(
                    name,
                    "every line needs a y value for each x value",
                ));
            }
            lines.push((label(&field(name, &line, "label")?), ys));
        }
        let point = match optional(map, "point") {
            None => None,
            Some(p) => {
                let (x, y) = xy(name, &p, "point")?;
                Some((x, y, label(&field(name, &p, "label")?)))
            }
        };
        if xs.len() < 2 || lines.is_empty() {
            return Err(chart_error(name, "needs two x values and a line at least"));
        }
        if xs[xs.len() - 1] <= xs[0] {
            return Err(chart_error(name, "the x values must rise"));
        }
        Ok(LineChart {
            title: label(&field(name, map, "title")?),
            x_axis: label(&field(name, map, "x_axis")?),
            y_axis: label(&field(name, map, "y_axis")?),
            xs,
            lines,
            point,
        })
    }
}

/// The `line_chart` function: `chart` (a map: `title`, `x_axis`, `y_axis`, `xs`, `lines` of
/// `label` and `ys`, an optional `point` of `x`, `y` and `label`) as an inline SVG, a safe string.
/// The legend under the plot has a row per line, in order, and the point's label last; the chart
/// grows to hold them.
pub fn line_chart(chart: &Value) -> Result<Value, minijinja::Error> {
    let chart = LineChart::read(chart)?;
    let (x0, x1) = (chart.xs[0], chart.xs[chart.xs.len() - 1]);
    let y_top = chart
        .lines
        .iter()
        .flat_map(|(_, ys)| ys.iter())
        .chain(chart.point.iter().map(|p| &p.1))
        .fold(0.0_f64, |a, &b| a.max(b));
    let (step, y1) = nice_axis(y_top);
    // A legend row for each line and one for the point, under the plot.
    let labels: Vec<String> = (chart.lines.iter().map(|(name, _)| name.clone()))
        .chain(chart.point.iter().map(|(_, _, name)| name.clone()))
        .collect();
    let legend = Legend::new(&labels);
    let frame = Frame {
        height: HEIGHT.max(legend.bottom()),
        x0,
        x1,
        y1,
    };
    let mut s = String::new();
    frame.open(&mut s, &chart.title);
    frame.y_grid(&mut s, step);
    frame.x_ticks(&mut s, &chart.xs, 0);
    Frame::axes(&mut s, &chart.x_axis, &chart.y_axis);
    for (i, (_, ys)) in chart.lines.iter().enumerate() {
        let (colour, dash) = STROKES[i % STROKES.len()];
        let points: Vec<String> = chart
            .xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| format!("{:.1},{:.1}", frame.px(x), frame.py(y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2.5\"{dash} points=\"{}\"/>",
            points.join(" ")
        );
        let ly = legend.y(i);
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{ly}\" x2=\"{x2}\" y2=\"{ly}\" stroke=\"{colour}\" stroke-width=\"2.5\"{dash}/>{text}",
            x2 = LEFT + 28.0,
            text = legend.text(i, "legend"),
        );
    }
    // The point's label is its legend row, not text beside it: lines close to the point would
    // run through a label there.
    if let Some((x, y, _)) = &chart.point {
        let (cx, cy) = (frame.px(x.clamp(x0, x1)), frame.py(*y));
        let row = chart.lines.len();
        let _ = writeln!(
            s,
            "<circle class=\"point\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5.5\"/>\n<circle class=\"point\" cx=\"{lx}\" cy=\"{ly}\" r=\"5.5\"/>{text}",
            lx = LEFT + 14.0,
            ly = legend.y(row),
            text = legend.text(row, "legend point-label"),
        );
    }
    s.push_str("</svg>");
    Ok(Value::safe(s))
}

/// One point of a scatter chart: where, its legend text (HTML) and its mark (one of [`MARKS`]).
#[derive(Debug)]
struct Point {
    x: f64,
    y: f64,
    label: String,
    mark: &'static str,
}

/// Which way a limit line of `scatter_chart` runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LimitLine {
    /// A vertical line at an `x` (a deadline).
    X(f64),
    /// A horizontal line at a `y` (a peak to carry).
    Y(f64),
}

impl LimitLine {
    fn value(self) -> f64 {
        match self {
            LimitLine::X(v) | LimitLine::Y(v) => v,
        }
    }

    /// The `x` of a vertical line.
    fn x(self) -> Option<f64> {
        match self {
            LimitLine::X(x) => Some(x),
            LimitLine::Y(_) => None,
        }
    }

    /// The `y` of a horizontal line.
    fn y(self) -> Option<f64> {
        match self {
            LimitLine::Y(y) => Some(y),
            LimitLine::X(_) => None,
        }
    }
}

/// What `scatter_chart` draws: numbered points and an optional vertical or horizontal limit.
/// Labels are HTML.
#[derive(Debug)]
struct ScatterChart {
    title: String,
    x_axis: String,
    y_axis: String,
    points: Vec<Point>,
    limit: Option<(LimitLine, String)>,
}

const SCATTER_CHART: &str = "scatter_chart";

impl ScatterChart {
    fn read(map: &Value) -> Result<Self, minijinja::Error> {
        let name = SCATTER_CHART;
        let mut points = Vec::new();
        let list = field(name, map, "points")?;
        for p in list
            .try_iter()
            .ok_or_else(|| chart_error(name, "`points` must be a list"))?
        {
            let (x, y) = xy(name, &p, "points")?;
            let given = field(name, &p, "mark")?;
            let mark = MARKS
                .iter()
                .find(|m| given.as_str() == Some(m))
                .ok_or_else(|| {
                    chart_error(
                        name,
                        &format!("a point's `mark` is {given}, expected one of {MARKS:?}"),
                    )
                })?;
            points.push(Point {
                x,
                y,
                label: label(&field(name, &p, "label")?),
                mark,
            });
        }
        let limit = match optional(map, "limit") {
            None => None,
            Some(l) => {
                let at = match (optional(&l, "x"), optional(&l, "y")) {
                    (Some(x), None) => {
                        LimitLine::X(numbers(name, &Value::from(vec![x]), "limit")?[0])
                    }
                    (None, Some(y)) => {
                        LimitLine::Y(numbers(name, &Value::from(vec![y]), "limit")?[0])
                    }
                    _ => return Err(chart_error(name, "a `limit` has one of `x` and `y`")),
                };
                Some((at, label(&field(name, &l, "label")?)))
            }
        };
        if points.is_empty() {
            return Err(chart_error(name, "needs a point at least"));
        }
        let negative = points.iter().any(|p| p.x < 0.0 || p.y < 0.0)
            || limit.as_ref().is_some_and(|l| l.0.value() < 0.0);
        if negative {
            return Err(chart_error(name, "x and y must not be negative"));
        }
        Ok(ScatterChart {
            title: label(&field(name, map, "title")?),
            x_axis: label(&field(name, map, "x_axis")?),
            y_axis: label(&field(name, map, "y_axis")?),
            points,
            limit,
        })
    }
}

/// The `scatter_chart` function: `chart` (a map: `title`, `x_axis`, `y_axis`, `points` of `x`,
/// `y`, `label` and `mark` — `chosen`, `option` or `out` —, an optional `limit` of `x` or `y`
/// and `label` drawn as a dashed vertical or horizontal line) as an inline SVG, a safe string.
/// Both axes start at zero; each point carries its number, and the legend under the plot gives each number's label.
pub fn scatter_chart(chart: &Value) -> Result<Value, minijinja::Error> {
    let chart = ScatterChart::read(chart)?;
    let x_top = chart
        .points
        .iter()
        .map(|p| p.x)
        .chain(chart.limit.iter().filter_map(|l| l.0.x()))
        .fold(0.0_f64, f64::max);
    let y_top = chart
        .points
        .iter()
        .map(|p| p.y)
        .chain(chart.limit.iter().filter_map(|l| l.0.y()))
        .fold(0.0_f64, f64::max);
    let (x_step, x1) = nice_axis(x_top);
    let (y_step, y1) = nice_axis(y_top);
    let labels: Vec<String> = (chart.points.iter().enumerate())
        .map(|(i, p)| format!("{}. {}", i + 1, p.label))
        .chain(chart.limit.iter().map(|(_, name)| name.clone()))
        .collect();
    let legend = Legend::new(&labels);
    let frame = Frame {
        height: legend.bottom(),
        x0: 0.0,
        x1,
        y1,
    };
    let mut s = String::new();
    frame.open(&mut s, &chart.title);
    frame.y_grid(&mut s, y_step);
    let mut ticks = Vec::new();
    let mut x = 0.0;
    while x <= x1 + x_step / 2.0 {
        ticks.push(x);
        x += x_step;
    }
    frame.x_ticks(&mut s, &ticks, usize::from(x_step.fract() != 0.0));
    Frame::axes(&mut s, &chart.x_axis, &chart.y_axis);
    if let Some((at, name)) = &chart.limit {
        let row = chart.points.len();
        let ly = legend.y(row);
        match *at {
            LimitLine::X(x) => {
                let lx = frame.px(x);
                let (tx, anchor) = Frame::beside(lx, 4.0);
                let _ = writeln!(
                    s,
                    "<line class=\"limit\" x1=\"{lx:.1}\" y1=\"{TOP}\" x2=\"{lx:.1}\" y2=\"{b}\"/><text class=\"limit-label\" x=\"{tx:.1}\" y=\"{ty}\" text-anchor=\"{anchor}\">{name}</text>",
                    b = TOP + PLOT_H,
                    ty = TOP + 12.0,
                );
            }
            LimitLine::Y(y) => {
                let py = frame.py(y);
                let _ = writeln!(
                    s,
                    "<line class=\"limit\" x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{x2}\" y2=\"{py:.1}\"/><text class=\"limit-label\" x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{name}</text>",
                    x2 = LEFT + PLOT_W,
                    tx = LEFT + PLOT_W - 4.0,
                    ty = py - 5.0,
                );
            }
        }
        let _ = writeln!(
            s,
            "<line class=\"limit\" x1=\"{LEFT}\" y1=\"{ly}\" x2=\"{x2}\" y2=\"{ly}\"/>{text}",
            x2 = LEFT + 28.0,
            text = legend.text(row, "legend"),
        );
    }
    marks(&mut s, &frame, &chart.points);
    for (i, p) in chart.points.iter().enumerate() {
        let _ = writeln!(
            s,
            "<circle class=\"{mark}\" cx=\"{cx}\" cy=\"{ly}\" r=\"5.5\"/>{text}",
            mark = p.mark,
            cx = LEFT + 14.0,
            ly = legend.y(i),
            text = legend.text(i, "legend"),
        );
    }
    s.push_str("</svg>");
    Ok(Value::safe(s))
}

/// The points on the plot, each numbered as in the legend. Points within a mark of each other
/// share one label (`1, 2`), so that no number is drawn over another; the recommendation is
/// drawn last, on top of any it sits on.
fn marks(s: &mut String, frame: &Frame, points: &[Point]) {
    let at: Vec<(f64, f64)> = (points.iter())
        .map(|p| (frame.px(p.x), frame.py(p.y)))
        .collect();
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &(cx, cy)) in at.iter().enumerate() {
        let near = groups.iter_mut().find(|(first, _)| {
            let (gx, gy) = at[*first];
            (gx - cx).abs() < 14.0 && (gy - cy).abs() < 12.0
        });
        match near {
            Some((_, members)) => members.push(i),
            None => groups.push((i, vec![i])),
        }
    }
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| points[i].mark == "chosen");
    for i in order {
        let (cx, cy) = at[i];
        let _ = writeln!(
            s,
            "<circle class=\"{mark}\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5.5\"/>",
            mark = points[i].mark,
        );
    }
    for (first, members) in &groups {
        let (cx, cy) = at[*first];
        let (tx, anchor) = Frame::beside(cx, 9.0);
        let numbers: Vec<String> = members.iter().map(|i| (i + 1).to_string()).collect();
        let _ = writeln!(
            s,
            "<text class=\"point-number\" x=\"{tx:.1}\" y=\"{ty:.1}\" text-anchor=\"{anchor}\">{}</text>",
            numbers.join(", "),
            ty = cy - 8.0,
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
    fn axes_end_on_a_round_number_above_the_top() {
        assert_eq!(nice_axis(347_000.0), (100_000.0, 400_000.0));
        assert_eq!(nice_axis(61.0), (20.0, 80.0));
        assert_eq!(nice_axis(0.0), (1.0, 1.0));
    }

    fn lines(n: usize) -> Value {
        let lines: Vec<serde_json::Value> = (0..n)
            .map(|i| serde_json::json!({"label": format!("line {i}"), "ys": [0, 100 * (i + 1)]}))
            .collect();
        decide_lang::Value::from_serialize(&serde_json::json!({
            "title": "T", "x_axis": "hours", "y_axis": "CNY", "xs": [0, 720], "lines": lines,
            "point": {"x": 600, "y": 150, "label": "<here>"},
        }))
    }

    /// The `y` of every `<text class="legend...">` of `svg`, in order.
    fn legend_rows(svg: &str) -> Vec<f64> {
        svg.split("<text class=\"legend")
            .skip(1)
            .map(|t| {
                let y = &t[t.find(" y=\"").unwrap() + 4..];
                y[..y.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn a_line_chart_labels_its_point_in_the_legend_and_grows_to_hold_every_row() {
        for n in [1, 2, 3] {
            let svg = line_chart(&lines(n)).unwrap().to_string();
            let height: f64 = {
                let v = &svg[svg.find("viewBox=\"0 0 680 ").unwrap() + 17..];
                v[..v.find('"').unwrap()].parse().unwrap()
            };
            let rows = legend_rows(&svg);
            // A row per line, then the point's, each under the last and inside the picture.
            assert_eq!(rows.len(), n + 1, "{svg}");
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
            assert!(rows[n] + 6.0 <= height, "{rows:?} in {height}: {svg}");
            assert!(
                svg.contains("class=\"legend point-label\" x=\"120\" y=\"")
                    && svg
                        .trim_end_matches("</svg>")
                        .trim_end()
                        .ends_with(">&lt;here&gt;</text>"),
                "the point's label is the last row, escaped: {svg}"
            );
            // The point is drawn where it is: x 600 of 0..720, y 150 on the axis from zero.
            let frame = Frame {
                height,
                x0: 0.0,
                x1: 720.0,
                y1: nice_axis((100.0 * n as f64).max(150.0)).1,
            };
            assert!(
                svg.contains(&format!(
                    "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\"",
                    frame.px(600.0),
                    frame.py(150.0)
                )),
                "{svg}"
            );
        }
    }

    fn chart(points: &[(f64, f64, &str)], limit: Option<f64>) -> Value {
        let points: Vec<Value> = points
            .iter()
            .map(|&(x, y, mark)| {
                decide_lang::Value::from_serialize(&serde_json::json!({
                    "x": x, "y": y, "mark": mark, "label": format!("<{mark}>")
                }))
            })
            .collect();
        let mut map = serde_json::json!({
            "title": "T", "x_axis": "days", "y_axis": "CNY", "points": points,
        });
        if let Some(x) = limit {
            map["limit"] = serde_json::json!({"x": x, "label": "deadline"});
        }
        decide_lang::Value::from_serialize(&map)
    }

    #[test]
    fn a_scatter_numbers_its_points_and_draws_the_limit_inside_the_axis() {
        let svg = scatter_chart(&chart(
            &[(49.9, 42_400.0, "option"), (14.1, 86_880.0, "chosen")],
            Some(60.0),
        ))
        .unwrap()
        .to_string();
        assert!(svg.contains(">1. &lt;option&gt;</text>"), "{svg}");
        assert!(svg.contains(">2. &lt;chosen&gt;</text>"), "{svg}");
        assert_eq!(svg.matches("<circle class=\"chosen\"").count(), 2);
        // x runs 0..60 in steps of 20 (the limit is the top), y 0..100,000.
        assert!(
            svg.contains(">60</text>") && !svg.contains(">80</text>"),
            "{svg}"
        );
        assert!(svg.contains(">100,000</text>"), "{svg}");
        let limit = &svg[svg.find("<line class=\"limit\"").unwrap()..];
        assert!(
            limit.starts_with("<line class=\"limit\" x1=\"656.0\""),
            "{limit}"
        );
        assert!(
            svg.contains("viewBox=\"0 0 680 398\""),
            "three legend rows: {svg}"
        );
    }

    #[test]
    fn a_scatter_draws_a_horizontal_limit_and_takes_it_into_the_y_axis() {
        let mut map = serde_json::json!({
            "title": "T", "x_axis": "CNY a month", "y_axis": "tokens/s",
            "points": [{"x": 7920.0, "y": 1500.0, "mark": "chosen", "label": "box"}],
            "limit": {"y": 2500.0, "label": "peak"},
        });
        let svg = scatter_chart(&decide_lang::Value::from_serialize(&map))
            .unwrap()
            .to_string();
        // y runs to the peak above the point (0..2,500 in steps of 500), not to the point's 1,500.
        assert!(svg.contains(">2,500</text>"), "{svg}");
        let limit = &svg[svg.find("<line class=\"limit\"").unwrap()..];
        let frame_y = |y: f64| {
            Frame {
                height: 0.0,
                x0: 0.0,
                x1: 1.0,
                y1: nice_axis(2500.0).1,
            }
            .py(y)
        };
        assert!(
            limit.starts_with(&format!(
                "<line class=\"limit\" x1=\"{LEFT}\" y1=\"{:.1}\"",
                frame_y(2500.0)
            )),
            "{limit}"
        );
        assert!(svg.contains(">peak</text>"), "{svg}");
        map["limit"] = serde_json::json!({"x": 1.0, "y": 2.0, "label": "both"});
        let e = scatter_chart(&decide_lang::Value::from_serialize(&map))
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of `x` and `y`"), "{e}");
    }

    #[test]
    fn a_long_legend_wraps_inside_the_chart_and_the_rows_below_move_down() {
        let long = "2 × Ascend 910B 64G ×8 (Huawei zone, Kunpeng 96-core): 4.5 days after 5 days \
                    of porting, ¥42,400 (recommended: the cheapest that meets the deadline)";
        let map = serde_json::json!({
            "title": "T", "x_axis": "days", "y_axis": "CNY",
            "points": [
                {"x": 9.5, "y": 42_400.0, "mark": "chosen", "label": long},
                {"x": 9.6, "y": 43_520.0, "mark": "option", "label": "short"},
                {"x": 30.0, "y": 21_000.0, "mark": "out", "label": "余下的所有方案都要更多天数才能完成这个任务，而且这一行很长很长很长很长很长很长很长很长很长很长很长"},
            ],
            "limit": {"x": 12.0, "label": "deadline: 12 days"},
        });
        let svg = scatter_chart(&decide_lang::Value::from_serialize(&map))
            .unwrap()
            .to_string();
        // Each line of a wrapped label fits the width beside the key.
        for line in svg
            .split("dy=\"15\">")
            .skip(1)
            .map(|t| &t[..t.find("</tspan>").unwrap()])
        {
            let width: f64 = line.chars().map(char_width).sum();
            assert!(width <= LEGEND_TEXT_W, "{line}: {width}");
        }
        assert_eq!(svg.matches("<tspan").count(), 2, "{svg}");
        // (The deadline's row, the last, is written before the points'.)
        let mut rows = legend_rows(&svg);
        rows.sort_by(f64::total_cmp);
        assert_eq!(rows.len(), 4, "{svg}");
        // The row after a two-line label is a line lower than a row further.
        assert!(
            (rows[1] - rows[0] - (ROW_H + LINE_H)).abs() < 0.01,
            "{rows:?}"
        );
        assert!((rows[2] - rows[1] - ROW_H).abs() < 0.01, "{rows:?}");
        // Two points a pixel apart share one number label; the recommendation is drawn last.
        assert!(svg.contains(">1, 2</text>"), "{svg}");
        let first = |mark: &str| svg.find(&format!("<circle class=\"{mark}\"")).unwrap();
        assert!(first("chosen") > first("option"), "{svg}");
    }

    #[test]
    fn wrapping_keeps_entities_and_tags_whole() {
        let text = format!("{} &amp; <b>x</b> {}", "a".repeat(80), "b".repeat(30));
        let lines = wrap(&text, LEGEND_TEXT_W);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.join(" ").contains("&amp;") && lines.join(" ").contains("<b>x</b>"));
        assert_eq!(wrap("short", LEGEND_TEXT_W), ["short"]);
        // Chinese breaks between characters, never before a closing mark.
        let zh = format!("{}荐）", "字".repeat(45));
        let lines = wrap(&zh, LEGEND_TEXT_W);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[1].starts_with("荐"), "{lines:?}");
        assert_eq!(lines.concat(), zh);
    }

    #[test]
    fn a_scatter_refuses_what_it_cannot_draw() {
        for (bad, why) in [
            (chart(&[], None), "needs a point at least"),
            (
                chart(&[(1.0, 2.0, "best")], None),
                "a point's `mark` is best",
            ),
            (
                chart(&[(-1.0, 2.0, "option")], None),
                "must not be negative",
            ),
        ] {
            let e = scatter_chart(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
