//! Pointer gestures read from egui's input events, not from one sampled position per frame: a
//! slow frame (a large volume on a software renderer draws at 2 frames a second) may hold a
//! whole press, drag and release, which egui's per-frame responses then report as nothing (the
//! pointer had moved too far for a click, and the button was up before a drag could start).
//! What the user did must still land where they let go.

use egui::{Event, Id, PointerButton, Pos2, Rect, Ui};

/// A primary-button gesture on one area, as far as this frame's events took it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gesture {
    /// Where the events left the pointer: the last move, or where the button was released.
    pub pos: Pos2,
    /// The press came in this frame (at `pressed_at`).
    pub began: bool,
    pub pressed_at: Pos2,
    /// The button was released in this frame.
    pub ended: bool,
}

/// Follows a primary-button press on `rect` (of `ui`'s layer, so not under a menu) through the
/// frame's events, and on through later frames until its release; `id` keeps it between
/// frames. None when no such gesture is under way.
pub fn follow(ui: &Ui, id: Id, rect: Rect) -> Option<Gesture> {
    let mut held: Option<Pos2> = ui.data(|d| d.get_temp(id));
    let mut out: Option<Gesture> = None;
    let layer = ui.layer_id();
    let ctx = ui.ctx();
    // Copied out: asking which layer is under a point must not happen inside the input lock.
    let events: Vec<Event> = ui.input(|i| {
        i.events
            .iter()
            .filter(|e| matches!(e, Event::PointerButton { .. } | Event::PointerMoved(_)))
            .cloned()
            .collect()
    });
    {
        for e in &events {
            match *e {
                Event::PointerButton { pos, button: PointerButton::Primary, pressed: true, .. }
                    if rect.contains(pos) && ctx.layer_id_at(pos).is_none_or(|l| l == layer) =>
                {
                    held = Some(pos);
                    out = Some(Gesture { pos, began: true, pressed_at: pos, ended: false });
                }
                Event::PointerMoved(pos) => {
                    if let Some(at) = held {
                        let began = out.is_some_and(|g| g.began);
                        out = Some(Gesture { pos, began, pressed_at: at, ended: false });
                    }
                }
                Event::PointerButton { pos, button: PointerButton::Primary, pressed: false, .. } => {
                    if let Some(at) = held.take() {
                        let began = out.is_some_and(|g| g.began);
                        out = Some(Gesture { pos, began, pressed_at: at, ended: true });
                    }
                }
                _ => {}
            }
        }
    }
    ui.data_mut(|d| {
        if let Some(p) = held {
            d.insert_temp(id, p);
        } else {
            d.remove::<Pos2>(id);
        }
    });
    out
}

/// Lets a click and a double-click span slow frames: egui times clicks by the frame they
/// arrive in, so two clicks 0.2 s apart land a whole frame apart at 2 frames a second, and a
/// press and its release held apart by [`HeldInput`] are a frame apart too.
pub fn allow_slow_clicks(ctx: &egui::Context, frame_seconds: f32) {
    const HUMAN_DOUBLE: f64 = 0.3;
    const HUMAN_CLICK: f32 = 0.8;
    let frame = frame_seconds.clamp(0.0, 1.0);
    ctx.options_mut(|o| {
        o.input_options.max_double_click_delay = HUMAN_DOUBLE + f64::from(frame);
        o.input_options.max_click_duration = f64::from(HUMAN_CLICK + frame);
    });
}

/// Input events held back to the next frame: egui starts a drag only in a frame that ends with
/// the button down, so a slider or a drag value pressed and released within one slow frame
/// would not move. A press and its release are given in two frames instead.
#[derive(Debug, Default)]
pub struct HeldInput(Vec<Event>);

impl HeldInput {
    /// Puts the events held from the last frame before `events`, and holds back everything
    /// from the first release that follows a press among them. True when events are held (the
    /// next frame must come to give them).
    pub fn split(&mut self, events: &mut Vec<Event>) -> bool {
        let mut all = std::mem::take(&mut self.0);
        all.append(events);
        let mut pressed = false;
        let cut = all.iter().position(|e| match e {
            Event::PointerButton { pressed: true, .. } => {
                pressed = true;
                false
            }
            Event::PointerButton { pressed: false, .. } => pressed,
            _ => false,
        });
        if let Some(i) = cut {
            self.0 = all.split_off(i);
        }
        *events = all;
        !self.0.is_empty()
    }

    /// Whether events wait for the next frame.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn button(pos: Pos2, pressed: bool) -> Event {
        Event::PointerButton { pos, button: PointerButton::Primary, pressed, modifiers: Default::default() }
    }

    /// A frame's press and release go to two frames; a double-click to three; a release of a
    /// press made earlier, and other events, pass as they come.
    #[test]
    fn a_press_and_its_release_are_given_in_two_frames() {
        let p = Pos2::new(5.0, 5.0);
        let mut held = HeldInput::default();
        let mut frame = vec![Event::PointerMoved(p), button(p, true), button(p, false), Event::PointerGone];
        assert!(held.split(&mut frame));
        assert_eq!(frame, [Event::PointerMoved(p), button(p, true)]);
        let mut next = vec![button(p, true), button(p, false)];
        assert!(held.split(&mut next));
        assert_eq!(next, [button(p, false), Event::PointerGone, button(p, true)]);
        let mut last = Vec::new();
        assert!(!held.split(&mut last));
        assert_eq!(last, [button(p, false)]);
        let mut plain = vec![button(p, false), Event::PointerMoved(p), button(p, true)];
        assert!(!held.split(&mut plain));
        assert_eq!(plain.len(), 3);
    }

    /// Runs one frame with `events` over a 100x100 area at the origin; the gesture it saw.
    fn frame(ctx: &egui::Context, events: Vec<Event>) -> Option<Gesture> {
        let mut seen = None;
        let input = egui::RawInput { events, ..Default::default() };
        let mut out = ctx.run_ui(input, |ui| {
            seen = follow(ui, Id::unique("area"), Rect::from_min_size(Pos2::ZERO, egui::vec2(100.0, 100.0)));
        });
        // No renderer here to take the font atlas.
        out.textures_delta.clear();
        seen
    }

    #[test]
    fn a_gesture_lands_where_released_in_one_frame_or_over_several() {
        let ctx = egui::Context::default();
        let (a, b, c) = (Pos2::new(10.0, 10.0), Pos2::new(50.0, 20.0), Pos2::new(90.0, 30.0));
        // All in one frame.
        let g = frame(
            &ctx,
            vec![Event::PointerMoved(a), button(a, true), Event::PointerMoved(b), button(c, false)],
        );
        assert_eq!(g, Some(Gesture { pos: c, began: true, pressed_at: a, ended: true }));
        assert_eq!(frame(&ctx, vec![Event::PointerMoved(b)]), None, "over once released");
        // Pressed in one frame, moved and released in the next: the press is remembered.
        assert_eq!(frame(&ctx, vec![button(a, true)]).map(|g| g.began), Some(true));
        let g = frame(&ctx, vec![Event::PointerMoved(b), Event::PointerMoved(c), button(c, false)]);
        assert_eq!(g, Some(Gesture { pos: c, began: false, pressed_at: a, ended: true }));
        // A press outside the area is not its gesture.
        assert_eq!(frame(&ctx, vec![button(Pos2::new(150.0, 10.0), true), button(a, false)]), None);
    }
}
