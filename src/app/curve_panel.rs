//! The ECC panel: the curve of the field (and of its smoothed version) against threshold, its
//! zero-crossings, and the threshold cursor that drives the mask on every slice view.

use super::dataset::Dataset;
use crate::export::format_threshold;
use egui::Color32;
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};

const ORIGINAL: Color32 = Color32::from_rgb(90, 160, 255);
const SMOOTHED: Color32 = Color32::from_rgb(255, 170, 60);
const THRESHOLD: Color32 = Color32::from_rgb(255, 80, 60);

/// Draws the plot; returns true when the user moved the threshold on it.
pub fn plot(
    ui: &mut egui::Ui,
    data: &mut Dataset,
    betti: Option<&crate::compute::betti_jobs::BettiLines>,
    height: f32,
) -> bool {
    let sigma = data.smoothed.as_ref().map(|s| s.sigma);
    let shown = data.displayed_curve().map(|c| (&c.crossings, c.suggested));
    let threshold = data.threshold;
    let resp = Plot::new("ecc plot")
        .height(height)
        .legend(Legend::default().position(egui_plot::Corner::RightBottom))
        .x_axis_label("threshold")
        .y_axis_label("Euler characteristic χ")
        .allow_drag(false)
        .allow_boxed_zoom(false)
        .show(ui, |pu| {
            if let Some(c) = &data.curve {
                pu.line(Line::new("original", PlotPoints::from(c.points.clone())).color(ORIGINAL));
            }
            if let (Some(s), Some(sigma)) = (&data.smoothed, sigma) {
                pu.line(
                    Line::new(format!("σ = {sigma}"), PlotPoints::from(s.curve.points.clone()))
                        .color(SMOOTHED),
                );
            }
            if let Some(b) = betti {
                let n = if data.displayed().ndim() == 3 { 3 } else { 2 };
                for (k, points) in b.points.iter().enumerate().take(n) {
                    let colour = super::explain::BETTI_COLOURS[k];
                    pu.line(Line::new(format!("β{k}"), PlotPoints::from(points.clone())).color(colour));
                }
            }
            if let Some((cross, best)) = &shown {
                let pts: Vec<[f64; 2]> = cross.iter().map(|c| [c.last_before, c.chi_before as f64]).collect();
                pu.points(Points::new("zero-crossings", pts).radius(3.0).color(Color32::LIGHT_GRAY));
                if let Some(b) = best {
                    pu.points(
                        Points::new("suggested", vec![[*b, 0.0]])
                            .radius(6.0)
                            .color(Color32::from_rgb(120, 230, 120)),
                    );
                }
            }
            pu.vline(VLine::new("threshold", threshold).color(THRESHOLD).width(1.5));
        });
    // Click or drag with the primary button moves the threshold; the wheel zooms the plot.
    let r = &resp.response;
    if (r.clicked() || r.dragged_by(egui::PointerButton::Primary))
        && let Some(p) = r.interact_pointer_pos()
    {
        let x = resp.transform.value_from_position(p).x;
        data.pick_threshold(x);
        return true;
    }
    false
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
