//! The 3D view's opacity curve, edited over the log histogram of the display window: drag a
//! point to move it, double-click to add one, right-click a point to remove it; the two end
//! points move only up and down. Presets start from common shapes.

use crate::render::colormap::Colormap;
use crate::render::transfer::{Preset, TransferFunction};
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use topoview_compute::FieldSummary;

/// How near (points) the pointer must be to pick a control point.
const PICK: f32 = 8.0;

pub fn editor(
    ui: &mut egui::Ui,
    tf: &mut TransferFunction,
    s: &FieldSummary,
    window: (f64, f64),
    cmap: Colormap,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label("3D opacity");
        ui.menu_button("presets", |ui| {
            for p in Preset::ALL {
                if ui.button(p.name()).clicked() {
                    *tf = p.function();
                }
            }
        });
    });
    let (rect, resp) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), 110.0), Sense::click_and_drag());
    let p = ui.painter_at(rect);
    p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let plot = rect.shrink(4.0);
    if plot.width() < 2.0 || plot.height() < 2.0 {
        return;
    }
    histogram_over_window(&p, plot, s, window, cmap);
    let to_screen = |x: f32, a: f32| Pos2::new(plot.min.x + x * plot.width(), plot.max.y - a * plot.height());
    let to_curve = |q: Pos2| ((q.x - plot.min.x) / plot.width(), (plot.max.y - q.y) / plot.height());
    let nearest = |q: Pos2, tf: &TransferFunction| {
        tf.points()
            .iter()
            .enumerate()
            .map(|(i, pt)| (i, to_screen(pt.x, pt.alpha).distance(q)))
            .filter(|&(_, d)| d <= PICK)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    // The point being dragged lives in egui's memory for the length of the drag.
    let id = resp.id.with("dragged point");
    // Followed through the frame's events: a slow frame may hold the press, the moves and the
    // release, and the point must end where the button was let go.
    if let Some(g) = super::gesture::follow(ui, resp.id.with("drag"), rect) {
        if g.began {
            let picked = nearest(g.pressed_at, tf);
            ui.data_mut(|d| d.insert_temp(id, picked));
        }
        if let Some(Some(i)) = ui.data(|d| d.get_temp::<Option<usize>>(id))
            && g.pos != g.pressed_at
        {
            let (x, a) = to_curve(g.pos);
            tf.move_point(i, x, a);
        }
        if g.ended {
            ui.data_mut(|d| d.remove::<Option<usize>>(id));
        }
    }
    if resp.double_clicked()
        && let Some(q) = resp.interact_pointer_pos()
        && nearest(q, tf).is_none()
    {
        let (x, a) = to_curve(q);
        tf.insert(x, a);
    }
    if resp.secondary_clicked()
        && let Some(q) = resp.interact_pointer_pos()
        && let Some(i) = nearest(q, tf)
    {
        tf.remove(i);
    }
    let line: Vec<Pos2> = tf.points().iter().map(|pt| to_screen(pt.x, pt.alpha)).collect();
    p.add(egui::Shape::line(line.clone(), Stroke::new(1.5, Color32::WHITE)));
    for q in line {
        p.circle(q, 4.0, Color32::from_rgb(255, 200, 60), Stroke::new(1.0, Color32::BLACK));
    }
    resp.on_hover_text("Drag a point; double-click to add one; right-click a point to remove it.");
}

/// The log histogram of the values inside the display window (the curve's x axis), with the
/// colormap along the bottom.
fn histogram_over_window(
    p: &egui::Painter,
    rect: Rect,
    s: &FieldSummary,
    window: (f64, f64),
    cmap: Colormap,
) {
    let Some((lo, hi)) = s.range else { return };
    let bins = s.histogram.len().max(1);
    let cols = (rect.width() as usize).clamp(1, 128);
    let (w0, w1) = window;
    let span = (w1 - w0).max(f64::MIN_POSITIVE);
    let mut sums = vec![0u64; cols];
    for (b, &c) in s.histogram.iter().enumerate() {
        let v = lo + (hi - lo) * (b as f64 + 0.5) / bins as f64;
        let x = (v - w0) / span;
        if (0.0..1.0).contains(&x) {
            sums[(x * cols as f64) as usize] += c;
        }
    }
    let top = sums.iter().map(|&c| ((c + 1) as f32).ln()).fold(0.0f32, f32::max).max(1e-6);
    let bw = rect.width() / cols as f32;
    for (i, &c) in sums.iter().enumerate() {
        let h = ((c + 1) as f32).ln() / top * (rect.height() - 8.0);
        let x = rect.min.x + i as f32 * bw;
        p.rect_filled(
            Rect::from_min_max(Pos2::new(x, rect.max.y - 8.0 - h), Pos2::new(x + bw, rect.max.y - 8.0)),
            0.0,
            Color32::from_gray(90),
        );
        let [r, g, b] = cmap.rgb((i as f32 + 0.5) / cols as f32);
        p.rect_filled(
            Rect::from_min_max(Pos2::new(x, rect.max.y - 6.0), Pos2::new(x + bw + 0.5, rect.max.y)),
            0.0,
            Color32::from_rgb(r, g, b),
        );
    }
}
