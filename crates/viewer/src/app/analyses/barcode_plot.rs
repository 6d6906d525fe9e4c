//! The barcode and the persistence diagram of a Rips computation, each clickable: a click
//! picks a bar (its simplices light up in the scatter), a drag across the barcode moves the
//! radius the complex is drawn at.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use egui_plot::{Line, Plot, PlotPoints, Points};
use topoview_core::topo::rips::Barcode;

/// Each dimension's colour (H0, H1, H2, H3).
pub const DIM_COLOURS: [Color32; 4] = [
    Color32::from_rgb(90, 160, 255),
    Color32::from_rgb(255, 150, 60),
    Color32::from_rgb(90, 210, 110),
    Color32::from_rgb(200, 120, 230),
];

pub fn dim_colour(dim: usize) -> Color32 {
    DIM_COLOURS[dim.min(3)]
}

/// The picked bar's colour.
pub const PICKED: Color32 = Color32::from_rgb(255, 70, 70);
/// The radius line's colour.
pub const RADIUS: Color32 = Color32::from_rgb(240, 220, 90);
/// The colour of the picked bar's killing simplex (white: no point of the colormaps is).
pub const KILLER: Color32 = Color32::WHITE;

/// A swatch and a name for each dimension, the radius and the picked bar.
pub fn legend(ui: &mut egui::Ui, maxdim: usize) {
    ui.horizontal(|ui| {
        let keys = (0..=maxdim).map(|d| (dim_colour(d), format!("H{d}")));
        let marks = [(RADIUS, "radius"), (PICKED, "picked: created by"), (KILLER, "killed by")];
        for (colour, name) in keys.chain(marks.map(|(c, n)| (c, n.to_string()))) {
            let (swatch, _) = ui.allocate_exact_size(Vec2::new(10.0, 10.0), Sense::hover());
            ui.painter().rect_filled(swatch, 1.0, colour);
            ui.colored_label(colour, name);
        }
    });
}

/// The radius axis's end: past the last finite death or birth, so infinite bars show as
/// reaching the right edge.
pub fn axis_end(b: &Barcode, threshold: f32) -> f32 {
    let top = b.bars.iter().flat_map(|x| [x.birth, x.death]).filter(|v| v.is_finite()).fold(0.0, f32::max);
    let top = if threshold.is_finite() { top.max(threshold) } else { top };
    if top > 0.0 { top * 1.08 } else { 1.0 }
}

/// Bars as rows (dimension by dimension, in the barcode's order), radius across; infinite bars
/// run to the right edge with an arrow head. A click picks the nearest bar spanning the clicked
/// radius; a drag sets `radius`.
pub fn barcode(
    ui: &mut egui::Ui,
    b: &Barcode,
    threshold: f32,
    radius: &mut f32,
    selected: &mut Option<usize>,
) {
    let width = ui.available_width();
    // The pane's height less the hint below.
    let height = (ui.available_height() - 2.0 * ui.text_style_height(&egui::TextStyle::Small)).max(80.0);
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, height), Sense::click_and_drag());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, Color32::from_gray(20));
    let plot = Rect::from_min_max(rect.min + Vec2::new(28.0, 4.0), rect.max - Vec2::new(6.0, 18.0));
    let end = axis_end(b, threshold);
    let x_of = |r: f32| plot.left() + plot.width() * (r.min(end) / end);
    let n = b.bars.len().max(1);
    let row = plot.height() / n as f32;
    let y_of = |i: usize| plot.top() + row * (i as f32 + 0.5);
    let thick = (row * 0.7).clamp(1.0, 6.0);
    for (i, bar) in b.bars.iter().enumerate() {
        let colour = if *selected == Some(i) { PICKED } else { dim_colour(bar.dim) };
        let y = y_of(i);
        let (x0, x1) = (x_of(bar.birth), x_of(bar.death));
        painter.line_segment([Pos2::new(x0, y), Pos2::new(x1.max(x0 + 1.0), y)], Stroke::new(thick, colour));
        if bar.death.is_infinite() && row >= 3.0 {
            let h = thick.max(3.0);
            painter.add(egui::Shape::convex_polygon(
                vec![Pos2::new(x1, y - h), Pos2::new(x1 + 5.0, y), Pos2::new(x1, y + h)],
                colour,
                Stroke::NONE,
            ));
        }
    }
    // Dimension labels at each dimension's first row.
    for d in 0..=b.maxdim {
        if let Some(first) = b.bars.iter().position(|x| x.dim == d) {
            painter.text(
                Pos2::new(rect.left() + 4.0, y_of(first).max(plot.top() + 6.0)),
                egui::Align2::LEFT_CENTER,
                format!("H{d}"),
                egui::FontId::proportional(11.0),
                dim_colour(d),
            );
        }
    }
    // The radius axis: 0 and the end, and the radius line.
    let font = egui::FontId::proportional(10.0);
    let axis_y = plot.bottom() + 9.0;
    painter.text(Pos2::new(plot.left(), axis_y), egui::Align2::LEFT_CENTER, "0", font.clone(), Color32::GRAY);
    painter.text(
        Pos2::new(plot.right(), axis_y),
        egui::Align2::RIGHT_CENTER,
        format!("{end:.3}"),
        font.clone(),
        Color32::GRAY,
    );
    let rx = x_of(*radius);
    painter.line_segment([Pos2::new(rx, plot.top()), Pos2::new(rx, plot.bottom())], Stroke::new(1.5, RADIUS));
    // The radius's value at the line's top, on whichever side has room (the axis's labels are
    // below).
    let right = rx > plot.center().x;
    let side = if right { egui::Align2::RIGHT_TOP } else { egui::Align2::LEFT_TOP };
    let at = Pos2::new(rx + if right { -4.0 } else { 4.0 }, plot.top() + 2.0);
    let text = painter.layout_no_wrap(format!("r = {radius:.4}"), font, RADIUS);
    let label = side.anchor_size(at, text.size());
    painter.rect_filled(label.expand(1.0), 2.0, Color32::from_black_alpha(200));
    painter.galley(label.min, text, RADIUS);
    let gesture = crate::app::gesture::follow(ui, resp.id.with("radius drag"), plot);
    if resp.clicked()
        && let Some(p) = resp.interact_pointer_pos()
    {
        // The bar nearest the click (within 6 points) among those spanning its radius:
        // rows are often thinner than a pixel.
        let r = ((p.x - plot.left()) / plot.width()).clamp(0.0, 1.0) * end;
        let nearest = b
            .bars
            .iter()
            .enumerate()
            .filter(|(_, x)| x.birth <= r && (r <= x.death || x_of(x.death) >= p.x - 2.0))
            .map(|(i, _)| (i, (y_of(i) - p.y).abs()))
            .filter(|(_, dy)| *dy <= 6.0f32.max(row))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match nearest {
            Some((i, _)) => pick(b, i, radius, selected),
            None => *selected = None,
        }
    } else if let Some(g) = gesture.filter(|g| g.pos.distance(g.pressed_at) > 2.0) {
        // A drag (to where the button was let go, when a slow frame held it all).
        *radius = (((g.pos.x - plot.left()) / plot.width()).clamp(0.0, 1.0) * end).min(threshold);
    }
    resp.on_hover_text(
        "Click a bar to see the simplices that create and kill it; drag across to move the radius.",
    );
}

/// Birth against death, a point a bar, the diagonal, and infinite deaths on a line above the
/// rest; a click picks the nearest point.
pub fn diagram(
    ui: &mut egui::Ui,
    b: &Barcode,
    threshold: f32,
    radius: &mut f32,
    selected: &mut Option<usize>,
) {
    let end = axis_end(b, threshold) as f64;
    let inf = end * 1.04;
    let y = |d: f32| if d.is_finite() { d as f64 } else { inf };
    // One plot a barcode (its bounds are the plot's memory, which would keep the last one's).
    let resp = Plot::new(("persistence diagram", b.bars.len(), end.to_bits()))
        .height((ui.available_height() - ui.text_style_height(&egui::TextStyle::Small)).max(80.0))
        .x_axis_label("birth")
        .y_axis_label("death")
        // Room for ticks as wide as "10.25" (narrower, their first digit was cut).
        .y_axis_min_width(40.0)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_zoom(false)
        .allow_boxed_zoom(false)
        .include_x(0.0)
        .include_y(0.0)
        .include_x(end)
        .include_y(inf * 1.01)
        .default_x_bounds(-0.02 * end, end)
        .default_y_bounds(-0.02 * end, inf * 1.02)
        .show(ui, |pu| {
            pu.line(
                Line::new("diagonal", PlotPoints::from(vec![[0.0, 0.0], [end, end]])).color(Color32::GRAY),
            );
            pu.line(
                Line::new("∞", PlotPoints::from(vec![[0.0, inf], [end, inf]]))
                    .color(Color32::from_gray(90))
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            // Classes alive at the radius lie above and left of these two lines.
            let r = *radius as f64;
            for (name, seg) in [("radius", [[0.0, r], [r, r]]), ("radius ", [[r, r], [r, inf]])] {
                pu.line(Line::new(name, PlotPoints::from(seg.to_vec())).color(RADIUS));
            }
            for d in 0..=b.maxdim {
                let pts: Vec<[f64; 2]> = b.of_dim(d).map(|x| [x.birth as f64, y(x.death)]).collect();
                pu.points(Points::new(format!("H{d}"), pts).radius(2.5).color(dim_colour(d)));
            }
            if let Some(x) = selected.and_then(|i| b.bars.get(i)) {
                pu.points(
                    Points::new("picked", vec![[x.birth as f64, y(x.death)]]).radius(6.0).color(PICKED),
                );
            }
        });
    let r = &resp.response;
    if r.clicked()
        && let Some(p) = r.interact_pointer_pos()
    {
        // The nearest point on screen, within 12 points.
        let nearest = b
            .bars
            .iter()
            .enumerate()
            .map(|(i, x)| {
                (
                    i,
                    resp.transform
                        .position_from_point(&egui_plot::PlotPoint::new(x.birth as f64, y(x.death)))
                        .distance(p),
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match nearest.filter(|n| n.1 <= 12.0) {
            Some((i, _)) => pick(b, i, radius, selected),
            None => *selected = None,
        }
    }
}

/// Picks bar `i` and moves the radius to where its class is alive: the middle of its bar, or
/// its birth if it lives on.
pub fn pick(b: &Barcode, i: usize, radius: &mut f32, selected: &mut Option<usize>) {
    *selected = Some(i);
    let x = &b.bars[i];
    *radius = if x.death.is_finite() { (x.birth + x.death) / 2.0 } else { x.birth };
}
