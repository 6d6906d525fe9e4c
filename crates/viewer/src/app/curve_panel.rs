//! The ECC panel: the curve of the field (and of its smoothed version) against threshold, its
//! zero-crossings, and the threshold cursor that drives the mask on every slice view.

use super::dataset::Dataset;
use egui::Color32;
use egui_plot::{GridInput, GridMark, Line, Plot, PlotPoints, Points, VLine};
use topoview_core::export::format_threshold;

const ORIGINAL: Color32 = Color32::from_rgb(90, 160, 255);
const SMOOTHED: Color32 = Color32::from_rgb(255, 170, 60);
const THRESHOLD: Color32 = Color32::from_rgb(255, 80, 60);
const SUGGESTED: Color32 = Color32::from_rgb(120, 230, 120);

/// One entry of the legend row above the plot.
pub struct Key {
    pub name: String,
    pub colour: Color32,
    /// A marker (dot) rather than a line.
    pub dot: bool,
}

/// Draws a legend above a plot, where it can never cover a curve; its keys wrap onto more
/// rows in a narrow view (each key is one widget, so that the row can break between keys).
pub fn legend(ui: &mut egui::Ui, keys: &[Key]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 10.0;
        for k in keys {
            let text = ui.visuals().strong_text_color();
            let galley =
                ui.painter().layout_no_wrap(k.name.clone(), egui::TextStyle::Body.resolve(ui.style()), text);
            let size = egui::vec2(19.0 + galley.size().x, galley.size().y.max(12.0));
            let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::hover());
            resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &k.name));
            let mark = egui::Rect::from_min_size(rect.min, egui::vec2(16.0, rect.height()));
            if k.dot {
                ui.painter().circle_filled(mark.center(), 4.0, k.colour);
            } else {
                let stroke = egui::Stroke::new(2.5, k.colour);
                ui.painter().line_segment([mark.left_center(), mark.right_center()], stroke);
            }
            ui.painter().galley(rect.min + egui::vec2(19.0, 0.0), galley, text);
        }
    });
}

/// Grid marks on a nested ladder of steps (1, 5, 10, 50, ... times a power of ten), so a float
/// axis from -7.9 to 7.9 is labelled every 5 (or 2.5...) and not at 0 alone.
fn ladder_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let base = input.base_step_size.max(f64::MIN_POSITIVE);
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Vec::new();
    }
    let mut step = 10f64.powf(base.log10().floor());
    if step * 5.0 < base {
        step *= 10.0;
    } else if step < base {
        step *= 5.0;
    }
    let mut steps = vec![step];
    while steps.len() < 4 {
        let s = steps[steps.len() - 1];
        // 1 -> 5 -> 10 -> 50: each step divides the next, so a mark has one step size.
        let mantissa = s / 10f64.powf(s.log10().floor());
        steps.push(if (mantissa - 5.0).abs() < 0.5 { s * 2.0 } else { s * 5.0 });
    }
    let mut marks = Vec::new();
    let fine = steps[0];
    let first = (lo / fine).ceil() as i64;
    let last = (hi / fine).floor() as i64;
    if last - first > 10_000 {
        return marks;
    }
    for i in first..=last {
        let value = i as f64 * fine;
        let step_size = steps
            .iter()
            .rev()
            .copied()
            .find(|&s| ((value / s).round() * s - value).abs() <= fine * 1e-6)
            .unwrap_or(fine);
        marks.push(GridMark { value, step_size });
    }
    marks
}

/// A tick label with as many decimals as its step needs (0.5 reads "0.5", not "1").
fn tick_label(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    let decimals = (-mark.step_size.log10() - 1e-9).ceil().max(0.0) as usize;
    format!("{:.*}", decimals, mark.value)
}

/// The largest |value| of a polyline, to normalise it (1 for an empty or flat-zero one).
fn scale_of(points: &[[f64; 2]]) -> f64 {
    let m = points.iter().map(|p| p[1].abs()).fold(0.0, f64::max);
    if m > 0.0 { m } else { 1.0 }
}

fn scaled(points: &[[f64; 2]], by: f64) -> Vec<[f64; 2]> {
    points.iter().map(|p| [p[0], p[1] / by]).collect()
}

/// Whether a plot's curves span ranges an order of magnitude apart (then one of them looks flat
/// unless they are normalised).
pub fn ranges_differ(scales: &[f64]) -> Option<f64> {
    let (lo, hi) = scales.iter().fold((f64::MAX, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
    (scales.len() > 1 && hi >= 10.0 * lo).then_some(hi / lo)
}

/// Draws the plot; returns true when the user moved the threshold on it. Click or drag sets
/// the threshold; the wheel zooms the threshold axis around the pointer; double-click shows
/// the whole curve again and leaves the threshold where it was; hovering reads out the
/// curves at the nearest threshold.
pub fn plot(
    ui: &mut egui::Ui,
    data: &mut Dataset,
    extra: &[PlotCurve],
    height: f32,
    normalise: &mut bool,
) -> bool {
    let sigma = data.smoothed.as_ref().map(|s| s.sigma);
    let shown = data.displayed_curve().map(|c| (&c.crossings, c.suggested));
    let (threshold, chosen) = (data.threshold, data.threshold_chosen);

    let mut lines: Vec<(String, Color32, &[[f64; 2]])> = Vec::new();
    if let Some(c) = &data.curve {
        lines.push(("original".into(), ORIGINAL, &c.points));
    }
    if let (Some(s), Some(sigma)) = (&data.smoothed, sigma) {
        lines.push((format!("σ = {sigma}"), SMOOTHED, &s.curve.points));
    }
    for c in extra {
        lines.push((c.name.clone(), c.colour, c.points));
    }
    let scales: Vec<f64> = lines.iter().map(|l| scale_of(l.2)).collect();
    let differ = ranges_differ(&scales);
    if lines.len() > 1 {
        ui.horizontal(|ui| {
            ui.checkbox(normalise, "Normalise curves").on_hover_text(
                "Each curve divided by its largest |value|, so curves of different ranges share the axis",
            );
            if let (Some(r), false) = (differ, *normalise) {
                ui.label(
                    egui::RichText::new(format!("(ranges differ {r:.0}x)")).color(ui.visuals().warn_fg_color),
                );
            }
        });
    }
    let norm = *normalise && lines.len() > 1;
    let mut keys: Vec<Key> =
        lines.iter().map(|l| Key { name: l.0.clone(), colour: l.1, dot: false }).collect();
    keys.push(Key { name: "threshold".into(), colour: THRESHOLD, dot: false });
    if shown.is_some_and(|(c, _)| !c.is_empty()) {
        keys.push(Key { name: "zero-crossings".into(), colour: Color32::LIGHT_GRAY, dot: true });
    }
    if shown.is_some_and(|(_, b)| b.is_some()) {
        keys.push(Key { name: "suggested".into(), colour: SUGGESTED, dot: true });
    }
    legend(ui, &keys);

    // The axis names what is drawn.
    let mut quantities: Vec<&str> = Vec::new();
    for c in extra {
        if !quantities.contains(&c.quantity) {
            quantities.push(c.quantity);
        }
    }
    let y_label = match (norm, quantities.is_empty()) {
        (true, _) => "each curve / its largest |value|".to_string(),
        (false, true) => "Euler characteristic χ".to_string(),
        (false, false) => format!("χ and {}", quantities.join(" and ")),
    };
    let displayed_ecc = data.displayed_curve().map(|c| c.ecc.clone());
    let resp = Plot::new("ecc plot")
        .height(height)
        .x_axis_label("threshold")
        .y_axis_label(y_label)
        .x_grid_spacer(ladder_marks)
        .y_grid_spacer(ladder_marks)
        .x_axis_formatter(tick_label)
        .y_axis_formatter(tick_label)
        .allow_drag(false)
        .allow_boxed_zoom(false)
        .allow_scroll(false)
        .allow_zoom(false)
        .show(ui, |pu| {
            for ((name, colour, points), s) in lines.iter().zip(&scales) {
                let pts = if norm { scaled(points, *s) } else { points.to_vec() };
                pu.line(Line::new(name.clone(), PlotPoints::from(pts)).color(*colour));
            }
            // Markers sit on the curve on screen: the smoothed one's scale when it is shown.
            let on_screen =
                usize::from(data.show_smoothed && data.smoothed.is_some() && data.curve.is_some());
            let y_scale = if norm { scales.get(on_screen).copied().unwrap_or(1.0) } else { 1.0 };
            if let Some((cross, best)) = &shown {
                let pts: Vec<[f64; 2]> =
                    cross.iter().map(|c| [c.last_before, c.chi_before as f64 / y_scale]).collect();
                pu.points(Points::new("zero-crossings", pts).radius(3.0).color(Color32::LIGHT_GRAY));
                if let Some(b) = best {
                    pu.points(Points::new("suggested", vec![[*b, 0.0]]).radius(6.0).color(SUGGESTED));
                }
            }
            pu.vline(VLine::new("threshold", threshold).color(THRESHOLD).width(1.5));
            // The wheel (or a pinch, or ctrl+wheel) zooms the threshold axis around the pointer
            // and fits the value axis to the curves in view, so that a zoomed zero-crossing
            // is not a flat line.
            if pu.response().hovered() {
                let factor = pu.ctx().input_mut(|i| {
                    let f = i.zoom_delta() * (i.smooth_scroll_delta.y / 200.0).exp();
                    i.smooth_scroll_delta = egui::Vec2::ZERO;
                    f
                });
                if factor != 1.0 {
                    let b = pu.plot_bounds();
                    let (x0, x1) = (b.min()[0], b.max()[0]);
                    let px = pu.pointer_coordinate().map_or((x0 + x1) / 2.0, |p| p.x);
                    let (x0, x1) = (px + (x0 - px) / factor as f64, px + (x1 - px) / factor as f64);
                    pu.set_plot_bounds_x(x0..=x1);
                    let drawn = lines.iter().zip(&scales).map(|(l, s)| (l.2, if norm { *s } else { 1.0 }));
                    if let Some((lo, hi)) = values_in(drawn, x0, x1) {
                        let pad = ((hi - lo) * 0.08).max(if norm { 0.02 } else { 1.0 });
                        pu.set_plot_bounds_y(lo - pad..=hi + pad);
                    }
                }
            }
            // The hovered threshold: the curve's value nearest the pointer, marked.
            let hovered = pu.pointer_coordinate().filter(|_| pu.response().hovered()).and_then(|p| {
                displayed_ecc.as_ref().and_then(|e| super::dataset::nearest(&e.thresholds, p.x))
            });
            if let (Some(t), Some(c)) = (hovered, data.displayed_curve()) {
                let y = c.chi_at(t) as f64 / y_scale;
                pu.points(Points::new("hovered", vec![[t, y]]).radius(4.0).color(Color32::WHITE));
            }
            hovered
        });
    let r = &resp.response;
    let text = match resp.inner {
        Some(t) => hover_readout(ui, data, extra, t),
        None => egui::RichText::new("hover the plot to read the curves at a threshold").weak().into(),
    };
    // Always one row under the plot, so nothing moves as the pointer comes and goes.
    ui.add(egui::Label::new(text).truncate());
    // A double-click shows the whole curve (the plot does that) and undoes its first click's
    // move of the threshold.
    let before_click = r.id.with("threshold before click");
    let gesture = super::gesture::follow(ui, r.id.with("threshold drag"), r.rect);
    if r.double_clicked() {
        if let Some((t, chosen, _)) = ui.ctx().data(|d| d.get_temp::<(f64, bool, f64)>(before_click)) {
            data.threshold = t;
            data.threshold_chosen = chosen;
        }
        return true;
    }
    // Clicked or dragged (a press, moves and release may all come in one slow frame): the
    // threshold goes where the pointer is, or was released.
    if let Some(g) = gesture {
        // The threshold before the first click of what may become a double-click.
        let now = ui.input(|i| i.time);
        let delay = ui.ctx().options(|o| o.input_options.max_double_click_delay);
        let recent = ui
            .ctx()
            .data(|d| d.get_temp::<(f64, bool, f64)>(before_click))
            .is_some_and(|b| now - b.2 < delay);
        if g.began && !recent {
            ui.ctx().data_mut(|d| d.insert_temp(before_click, (threshold, chosen, now)));
        }
        let x = resp.transform.value_from_position(g.pos).x;
        data.pick_threshold(x);
        return true;
    }
    false
}

/// The lowest and highest value of the curves (each divided by its scale) over thresholds
/// `x0` to `x1`, the step each curve holds at `x0` included (the curves are staircases).
fn values_in<'a>(
    curves: impl Iterator<Item = (&'a [[f64; 2]], f64)>,
    x0: f64,
    x1: f64,
) -> Option<(f64, f64)> {
    let mut range: Option<(f64, f64)> = None;
    for (points, scale) in curves {
        let first = points.partition_point(|p| p[0] < x0).saturating_sub(1);
        for p in points[first..].iter().take_while(|p| p[0] <= x1) {
            let v = p[1] / scale;
            range = Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        }
    }
    range
}

/// A curve an analysis adds to the ECC plot ([`super::analyses::Analysis::plot_curves`]), over
/// the same thresholds as χ.
pub struct PlotCurve<'a> {
    pub name: String,
    pub colour: Color32,
    /// What it counts, for the value axis's name ("Betti numbers β").
    pub quantity: &'static str,
    /// Its points as drawn (x: the threshold).
    pub points: &'a [[f64; 2]],
    /// Its exact value at a threshold, for the hover readout.
    pub value_at: Box<dyn Fn(f64) -> String + 'a>,
}

/// The curve plot as a pane of the central area: as large as the pane, with the analyses'
/// curves beside χ.
pub fn pane(app: &mut super::TopoApp, units: &super::analyses::Analyses, ui: &mut egui::Ui) {
    let units = units.all();
    let extra: Vec<PlotCurve> = units.iter().flat_map(|u| u.plot_curves(app)).collect();
    let Some(d) = &mut app.data else {
        ui.label("No field loaded.");
        return;
    };
    if !d.analysed() {
        ui.label("A label map: no curve over its ids (the side panel says how to have one).");
        return;
    }
    if d.curve.is_none() && d.smoothed.is_none() {
        ui.label("Computing the curve…");
        return;
    }
    // Rows above and below the plot: the normalise switch, the legend, the hover readout.
    let rows = 3.0 * (ui.spacing().interact_size.y + ui.spacing().item_spacing.y);
    let height = (ui.available_height() - rows).max(60.0);
    plot(ui, d, &extra, height, &mut app.settings.normalise_curves);
}

/// "threshold t: χ = .. (σ: χ = ..) β0 = .." in the curves' colours, for the hovered threshold.
fn hover_readout(ui: &egui::Ui, data: &Dataset, extra: &[PlotCurve], t: f64) -> egui::WidgetText {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let mut job = egui::text::LayoutJob::default();
    let mut add = |text: String, colour: Color32| {
        job.append(&text, 0.0, egui::TextFormat::simple(font.clone(), colour));
    };
    let strong = ui.visuals().strong_text_color();
    add(format!("threshold {}:", format_threshold(t, data.displayed().dtype())), strong);
    if let Some(c) = &data.curve {
        add(format!("  χ = {}", c.chi_at(t)), ORIGINAL);
    }
    if let Some(s) = &data.smoothed {
        add(format!("  σ = {}: χ = {}", s.sigma, s.curve.chi_at(t)), SMOOTHED);
    }
    for c in extra {
        add(format!("  {} = {}", c.name, (c.value_at)(t)), c.colour);
    }
    job.into()
}

/// The threshold entry and readouts under the plot.
pub fn readout(ui: &mut egui::Ui, data: &mut Dataset) {
    let dtype = data.displayed().dtype();
    ui.horizontal(|ui| {
        let label = ui.label("Threshold");
        let speed = data.displayed_summary().range.map_or(1.0, |(lo, hi)| (hi - lo) / 500.0);
        let mut t = data.threshold;
        let resp = ui
            .add(
                egui::DragValue::new(&mut t).speed(speed).custom_formatter(|v, _| format_threshold(v, dtype)),
            )
            .labelled_by(label.id);
        if resp.changed() {
            data.threshold = t;
            data.threshold_chosen = true;
        }
        if let Some(best) = data.displayed_curve().and_then(|c| c.suggested)
            && ui
                .button("Suggested")
                .on_hover_text(format!(
                    "The last value before the first zero-crossing from χ > 0 to χ < 0: {}",
                    format_threshold(best, dtype)
                ))
                .clicked()
        {
            data.threshold = best;
            data.threshold_chosen = true;
        }
    });
    let t = data.threshold;
    if let Some(c) = &data.curve {
        ui.label(egui::RichText::new(format!("χ = {}", c.chi_at(t))).size(20.0).strong().color(ORIGINAL))
            .on_hover_text("Euler characteristic of the original field's set at the threshold");
    }
    if let Some(s) = &data.smoothed {
        ui.label(
            egui::RichText::new(format!("χ = {}  (σ = {})", s.curve.chi_at(t), s.sigma))
                .size(16.0)
                .color(SMOOTHED),
        );
    }
    if let Some(c) = data.displayed_curve() {
        let cross = &c.crossings;
        let list: Vec<String> =
            cross.iter().take(6).map(|c| format_threshold(c.last_before, dtype)).collect();
        let more = if cross.len() > 6 { format!(" (+{} more)", cross.len() - 6) } else { String::new() };
        ui.small(format!(
            "{} values; zero-crossings after {}{}",
            c.ecc.thresholds.len(),
            if list.is_empty() { "none".into() } else { list.join(", ") },
            more
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(lo: f64, hi: f64, base: f64) -> Vec<GridMark> {
        ladder_marks(GridInput { bounds: (lo, hi), base_step_size: base })
    }

    /// A float axis from -7.9 to 7.9 gets labels every 5 (not at 0 alone); each mark carries
    /// the largest step it is a multiple of, on a ladder where each step divides the next.
    #[test]
    fn float_axes_get_marks_on_a_nested_ladder() {
        let m = marks(-7.9, 7.9, 0.31);
        assert_eq!(m.first().map(|m| m.value), Some(-7.5));
        let step = |v: f64| m.iter().find(|k| (k.value - v).abs() < 1e-9).map(|k| k.step_size);
        assert_eq!(step(0.5), Some(0.5));
        assert_eq!(step(1.0), Some(1.0));
        assert_eq!(step(5.0), Some(5.0));
        assert_eq!(step(-5.0), Some(5.0));
        assert_eq!(step(0.0), Some(10.0), "the top of the ladder: 0.5, 1, 5, 10");
        assert!(marks(0.0, 255.0, 7.0).iter().any(|k| k.value == 50.0 && k.step_size == 50.0));
        assert!(marks(1.0, 0.0, 1.0).is_empty());
        assert!(marks(0.0, f64::INFINITY, 1.0).is_empty());
    }

    #[test]
    fn tick_labels_have_the_decimals_their_step_needs() {
        let range = 0.0..=1.0;
        assert_eq!(tick_label(GridMark { value: 0.5, step_size: 0.5 }, &range), "0.5");
        assert_eq!(tick_label(GridMark { value: 5.0, step_size: 5.0 }, &range), "5");
        assert_eq!(tick_label(GridMark { value: 0.05, step_size: 0.05 }, &range), "0.05");
        assert_eq!(tick_label(GridMark { value: 100.0, step_size: 100.0 }, &range), "100");
    }

    #[test]
    fn ranges_an_order_of_magnitude_apart_are_flagged() {
        assert_eq!(ranges_differ(&[400.0, 20.0]), Some(20.0));
        assert_eq!(ranges_differ(&[400.0, 100.0]), None);
        assert_eq!(ranges_differ(&[400.0]), None);
        assert_eq!(
            scaled(&[[1.0, -4.0], [2.0, 2.0]], scale_of(&[[1.0, -4.0], [2.0, 2.0]])),
            [[1.0, -1.0], [2.0, 0.5]]
        );
    }
}
