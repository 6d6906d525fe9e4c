//! Pointer gestures read from egui's input events, not from one sampled position per frame: a
//! slow frame (a large volume on a software renderer draws at 2 frames a second) may hold a
//! whole press, drag and release, and what the user did must still land where they let go.

use egui::{Event, PointerButton, Pos2, Response, Ui};

/// Where a primary-button click or drag on `resp` puts the pointer this frame: where the
/// button was released when the gesture ended this frame (it may have begun in the same
/// frame), else the pointer's latest position while it goes on. None when no such gesture is
/// on `resp`.
pub fn primary_pos(ui: &Ui, resp: &Response) -> Option<Pos2> {
    let active = resp.clicked()
        || resp.dragged_by(PointerButton::Primary)
        || resp.drag_stopped_by(PointerButton::Primary);
    if !active {
        return None;
    }
    released_at(ui, PointerButton::Primary)
        .or_else(|| resp.interact_pointer_pos())
        .or_else(|| ui.input(|i| i.pointer.latest_pos()))
}

/// Where `button` was last released this frame, if it was.
pub fn released_at(ui: &Ui, button: PointerButton) -> Option<Pos2> {
    ui.input(|i| {
        i.events.iter().rev().find_map(|e| match e {
            Event::PointerButton { pos, button: b, pressed: false, .. } if *b == button => Some(*pos),
            _ => None,
        })
    })
}

/// Where the press that began the drag on `resp` was (not where the pointer is by the frame
/// that reports the drag's start).
pub fn press_pos(ui: &Ui, resp: &Response) -> Option<Pos2> {
    ui.input(|i| i.pointer.press_origin()).or_else(|| resp.interact_pointer_pos())
}

/// Lets a double-click span two slow frames: egui times clicks by the frame they arrive in,
/// so two clicks 0.2 s apart land a whole frame apart at 2 frames a second.
pub fn allow_slow_double_clicks(ctx: &egui::Context, frame_seconds: f32) {
    const HUMAN: f64 = 0.3;
    let delay = HUMAN + f64::from(frame_seconds.clamp(0.0, 1.0));
    ctx.options_mut(|o| o.input_options.max_double_click_delay = delay);
}
