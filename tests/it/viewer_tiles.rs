//! The viewer's layout and input as a user meets them: the views as tiles that fit the window at
//! common sizes and at a projector's scale, a clean slate for each new file, gestures that land
//! where the pointer was released at 2 frames a second, the side panel's wheel, and the default
//! layouts and a maximised diagram as pictures.

use super::viewer::{click_at, harness, hovered_threshold, idle, settle, snapshot_options, steady, wait_for};
use egui::{Pos2, Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use topoview_viewer::app::tiles::Pane;
use topoview_viewer::app::{Startup, TopoApp};
use topoview_viewer::render::colormap::Colormap;

fn harness_at(file: &str, size: Vec2, scale: f32, step_dt: f32) -> Harness<'static, TopoApp> {
    let path = crate::common::data(file);
    Harness::builder()
        .with_size(size)
        .with_pixels_per_point(scale)
        .with_step_dt(step_dt)
        .wgpu()
        .build_eframe(move |cc| steady(TopoApp::new(cc, Startup { file: Some(path), ..Default::default() })))
}

/// A node's rectangle in points, if it has one.
fn rect_of(n: &egui_kittest::Node<'_>) -> Option<Rect> {
    n.accesskit_node().bounding_box()?;
    Some(n.rect())
}

/// What is wrong with where the widgets are: one outside the window, one in a view reaching
/// out of it, two in a row on top of each other, or a side panel that leaves the views less
/// than half the window. Widgets in the side panel may lie above or below its visible part
/// (it scrolls), not beside it.
fn misplaced(h: &Harness<'_, TopoApp>) -> Vec<String> {
    let window = h.ctx.content_rect();
    let side = h.get_by_label("Euler characteristic curve").rect().min.x - 12.0;
    let panes = h.state().layouts.pane_rects(h.state().arrangement());
    let mut wrong = Vec::new();
    if side < 0.5 * window.width() {
        wrong.push(format!("the side panel starts at x = {side:.0} of {:.0}", window.width()));
    }
    // The side panel keeps its default width (420 points and its margins): no row of it is
    // wider, so the user can narrow it.
    if window.max.x - side > 460.0 {
        wrong.push(format!("the side panel is {:.0} points wide", window.max.x - side));
        let mut wide: Vec<(f32, String)> = h
            .root()
            .children_recursive()
            .filter_map(|n| {
                let r = rect_of(&n)?;
                (r.min.x >= side && r.width() > 300.0)
                    .then(|| (r.width(), format!("{:?}", n.accesskit_node().label())))
            })
            .collect();
        wide.sort_by(|a, b| b.0.total_cmp(&a.0));
        wrong.extend(wide.into_iter().take(8).map(|(w, l)| format!("  {w:.0} wide: {l}")));
    }
    let mut leaves: Vec<(String, Rect)> = Vec::new();
    for n in h.root().children_recursive() {
        let node = n.accesskit_node();
        let Some(r) = rect_of(&n) else { continue };
        if r.width() <= 0.0 || r.height() <= 0.0 {
            continue;
        }
        let name = format!("{:?} {:?}", node.role(), node.label().or(node.value()).unwrap_or_default());
        let in_panel = r.min.x >= side;
        let outside = r.min.x < window.min.x - 0.5
            || r.max.x > window.max.x + 0.5
            || (!in_panel && (r.min.y < window.min.y - 0.5 || r.max.y > window.max.y + 0.5));
        if outside {
            wrong.push(format!("{name} at {r:?} is outside the window {window:?}"));
        }
        if let Some((pane, p)) = panes.iter().find(|(_, p)| p.contains(r.center()))
            && !p.expand(0.5).contains_rect(r)
        {
            wrong.push(format!("{name} at {r:?} reaches out of the {pane:?} view at {p:?}"));
        }
        // Unnamed nodes are areas (a view, a plot, a resize handle between tiles), not widgets
        // a label could be hidden under.
        let area = node.role() == egui::accesskit::Role::Unknown;
        if node.children().next().is_none() && !in_panel && !area {
            leaves.push((name, r));
        }
    }
    for (i, (a, ra)) in leaves.iter().enumerate() {
        for (b, rb) in &leaves[i + 1..] {
            let overlap = ra.intersect(*rb);
            let nested = ra.contains_rect(*rb) || rb.contains_rect(*ra);
            if overlap.width() > 1.0 && overlap.height() > 1.0 && !nested {
                wrong.push(format!("{a} at {ra:?} overlaps {b} at {rb:?}"));
            }
        }
    }
    wrong
}

/// Nothing is clipped or covered at 1280x720 and 1920x1080, and with the interface scaled up
/// by 1.5 (a projector), for a volume (four views and the plots) and a 2D image.
#[test]
fn nothing_is_clipped_at_common_sizes_and_a_projectors_scale() {
    let mut wrong = Vec::new();
    for file in ["mni152_t1_09a.nii.gz", "coins.png"] {
        // Sizes in points: 1920x1080 pixels at scale 1.5 are 1280x720 points.
        for (size, scale) in [((1280.0, 720.0), 1.0), ((1920.0, 1080.0), 1.0), ((1280.0, 720.0), 1.5)] {
            let mut h = harness_at(file, Vec2::from(size), scale, 1.0 / 60.0);
            wait_for(&mut h, file, idle);
            wrong.extend(misplaced(&h).into_iter().map(|w| format!("{file} {size:?} x{scale}: {w}")));
        }
    }
    // A volume with its Morse-Smale diagram and curves in a short pane (Ctrl+plus twice at
    // 1280x720), which cut the curves off before.
    let file = "nilearn_neurovault_10426.nii.gz";
    let mut h = harness_at(file, Vec2::new(1280.0 / 1.2, 720.0 / 1.2), 1.2, 1.0 / 60.0);
    wait_for(&mut h, file, |a| idle(a) && a.data.as_ref().is_some_and(|d| d.msc.is_some()));
    wrong.extend(misplaced(&h).into_iter().map(|w| format!("{file} x1.2: {w}")));
    assert!(wrong.is_empty(), "{} misplaced:\n{}", wrong.len(), wrong.join("\n"));
}

/// Opening another file leaves nothing of the last one on screen (overlays, curves, σ, the
/// complex's labels, layers, the opacity curve) and keeps the user's preferences (the colormap).
#[test]
fn a_new_file_keeps_nothing_of_the_last_but_the_users_preferences() {
    use topoview_viewer::app::analyses::msc::LabelOverlay;
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins.png", idle);
    h.state_mut().settings.colormap = Colormap::Viridis;
    // One at a time: each changes the panel below it.
    for label in ["basins", "Show edges on the cracks between pixels", "Betti curves", "Components and holes"]
    {
        h.get_by_label(label).scroll_to_me();
        h.run_steps(3);
        h.get_by_label(label).click();
        h.run_steps(3);
    }
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "σ (voxels)").set_value_accesskit(1.0);
    h.state_mut().settings.view3d.transfer = topoview_viewer::render::transfer::Preset::CtBone.function();
    wait_for(&mut h, "the smoothed coins.png", |a| {
        idle(a) && a.data.as_ref().is_some_and(|d| d.smoothed.is_some())
    });
    let a = h.state();
    assert!(a.units.cracks.slice.is_some(), "edges: shown {}", a.units.cracks.settings.show);
    assert!(a.units.explain.lines.is_some(), "Betti curves");
    assert!(a.units.explain.shown.is_some(), "parts");
    assert_eq!(h.state().units.msc.settings.labels, LabelOverlay::Basins);
    let stack = crate::common::data("pydicom_emri_small_stack_uint16.tif");
    h.state_mut().open(stack, Default::default());
    wait_for(&mut h, "the TIFF stack", |a| idle(a) && a.data.as_ref().is_some_and(|d| d.field.ndim() == 3));
    let a = h.state();
    assert!(!a.units.cracks.settings.show && a.units.cracks.slice.is_none(), "no edges");
    assert!(!a.units.explain.settings.betti && !a.units.explain.settings.parts, "no Betti curves, no parts");
    assert!(a.units.explain.lines.is_none() && a.units.explain.shown.is_none());
    assert_eq!(a.sigma, 0.0);
    assert!(a.data.as_ref().is_some_and(|d| d.smoothed.is_none()));
    assert_eq!(a.units.msc.settings.labels, LabelOverlay::None);
    assert!(a.units.layers.list.is_empty());
    assert_eq!(a.settings.view3d.transfer, Default::default(), "the opacity curve starts afresh");
    assert_eq!(a.settings.colormap, Colormap::Viridis, "the user's colormap stays");
    assert_eq!(a.title(), "pydicom_emri_small_stack_uint16.tif - topoview");
    h.snapshot_options("stack_after_coins", &snapshot_options());
}

/// The plot's rectangle: between its legend and the readout row under it.
fn plot_row(h: &Harness<'_, TopoApp>) -> (f32, f32, f32) {
    let legend = h.get_by_label("original").rect();
    let below = h.get_by_label("hover the plot to read the curves at a threshold").rect();
    ((legend.max.y + below.min.y) / 2.0, below.min.x, below.max.x)
}

/// Pushes `events` into one frame, as a slow frame receives them, and runs that frame.
/// Gives `events` to the app as one frame of a real window would: through its raw input hook,
/// which may hold some back to the next frame.
fn hooked_frame(h: &mut Harness<'_, TopoApp>, events: Vec<egui::Event>) {
    use eframe::App;
    let ctx = h.ctx.clone();
    let mut raw = egui::RawInput { events, ..Default::default() };
    h.state_mut().raw_input_hook(&ctx, &mut raw);
    h.input_mut().events.extend(raw.events);
    h.step();
}

/// One frame of `events`, then the frames that give what the app held back of them.
fn one_frame(h: &mut Harness<'_, TopoApp>, events: Vec<egui::Event>) {
    hooked_frame(h, events);
    while !h.state().held_input.is_empty() {
        hooked_frame(h, Vec::new());
    }
}

fn button(pos: Pos2, pressed: bool) -> egui::Event {
    egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: Default::default(),
    }
}

/// At 2 frames a second a frame holds much of a gesture: a drag on the plot whose moves and
/// release come in one frame, or the whole drag in one frame, ends where the button was
/// released; a double-click whose clicks come a frame apart still resets a slice's zoom.
#[test]
fn gestures_at_two_frames_a_second_end_where_the_pointer_was_released() {
    let mut h = harness_at("coins.png", Vec2::new(1280.0, 800.0), 1.0, 0.5);
    wait_for(&mut h, "the coins", idle);
    let (y, x0, x1) = plot_row(&h);
    let (start, end) = (Pos2::new(x0 + 90.0, y), Pos2::new(x1 - 40.0, y));
    let want = hovered_threshold(&mut h, end);
    one_frame(&mut h, vec![egui::Event::PointerMoved(start), button(start, true)]);
    let mut rest: Vec<egui::Event> =
        (1..=10).map(|k| egui::Event::PointerMoved(start.lerp(end, k as f32 / 10.0))).collect();
    rest.push(button(end, false));
    one_frame(&mut h, rest);
    settle(&mut h);
    assert_eq!(h.state().data.as_ref().unwrap().threshold, want, "the drag ends at the release");

    // The whole drag, back to the start, in one frame.
    let back = hovered_threshold(&mut h, start);
    let mut all = vec![egui::Event::PointerMoved(end), button(end, true)];
    all.extend((1..=10).map(|k| egui::Event::PointerMoved(end.lerp(start, k as f32 / 10.0))));
    all.push(button(start, false));
    one_frame(&mut h, all);
    settle(&mut h);
    assert_eq!(h.state().data.as_ref().unwrap().threshold, back);

    // A double-click on the image, its clicks a frame (0.5 s) apart, resets the zoom.
    h.state_mut().views.nav[2].zoom = 3.0;
    let image = h.state().layouts.pane_rects(h.state().arrangement());
    let (_, r) = image.iter().find(|(p, _)| *p == Pane::Slice(2)).cloned().unwrap();
    // Each click's press and release in one frame, the two clicks a frame apart.
    for _ in 0..2 {
        hooked_frame(
            &mut h,
            vec![egui::Event::PointerMoved(r.center()), button(r.center(), true), button(r.center(), false)],
        );
    }
    one_frame(&mut h, Vec::new());
    settle(&mut h);
    assert_eq!(h.state().views.nav[2].zoom, 1.0, "the double-click was seen");
}

/// The wheel over the side panel scrolls it, over the histogram too (no widget of the panel
/// takes the wheel for itself); a plot takes it only where the pointer is on the plot.
#[test]
fn the_side_panels_wheel_scrolls_the_panel() {
    let mut h = harness("coins.png");
    wait_for(&mut h, "the coins", idle);
    let before = h.get_by_label("Threshold").rect();
    let window = h.get_by_label("Window").rect();
    let histogram = Pos2::new(window.center().x + 60.0, window.max.y + 40.0);
    h.hover_at(histogram);
    settle(&mut h);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -120.0),
        modifiers: Default::default(),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
    });
    settle(&mut h);
    let after = h.get_by_label("Threshold").rect();
    assert!(after.min.y < before.min.y - 50.0, "the panel scrolled: {before:?} -> {after:?}");
}

/// The default layout of a volume: the four views, the curves, the diagram and the scale-space.
#[test]
fn the_default_layout_of_a_volume() {
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume", idle);
    let panes: Vec<Pane> =
        h.state().layouts.pane_rects(h.state().arrangement()).into_iter().map(|p| p.0).collect();
    for p in [
        Pane::Slice(0),
        Pane::Slice(1),
        Pane::Slice(2),
        Pane::View3d,
        Pane::Curve,
        Pane::of("Morse-Smale complex", "Diagram"),
    ] {
        assert!(panes.contains(&p), "{p:?} in {panes:?}");
    }
    h.snapshot_options("layout_volume", &snapshot_options());
}

/// A 2D image's default layout, and its Morse-Smale persistence diagram maximised (from the
/// tab bar's Maximise) and restored.
#[test]
fn the_default_layout_of_an_image_and_the_maximised_diagram() {
    let mut h = harness("coins.png");
    wait_for(&mut h, "the coins", |a| idle(a) && a.data.as_ref().is_some_and(|d| d.msc.is_some()));
    h.snapshot_options("layout_image", &snapshot_options());
    let a = h.state().arrangement();
    let diagram = h
        .state()
        .layouts
        .pane_rects(a)
        .into_iter()
        .find(|p| p.0 == Pane::of("Morse-Smale complex", "Diagram"))
        .unwrap()
        .1;
    // The Maximise button of the diagram's tab bar (the one above it).
    let button = h
        .get_all_by_label("Maximise")
        .map(|n| n.rect())
        .filter(|r| {
            r.max.y <= diagram.min.y + 1.0 && r.center().x > diagram.min.x && r.center().x < diagram.max.x
        })
        .max_by(|x, y| x.min.y.total_cmp(&y.min.y))
        .unwrap();
    click_at(&mut h, button.center());
    settle(&mut h);
    assert_eq!(h.state().layouts.maximised(a), Some(Pane::of("Morse-Smale complex", "Diagram")));
    h.snapshot_options("coins_diagram_maximised", &snapshot_options());
    h.get_by_label("Restore").click();
    settle(&mut h);
    assert_eq!(h.state().layouts.maximised(a), None);
}

/// A point cloud's default layout: the cloud, its barcode and diagram.
#[test]
fn the_default_layout_of_a_point_cloud() {
    let mut h = harness("rips/mni152_set150_400.csv");
    wait_for(&mut h, "the cloud's barcode", |a| a.jobs.is_empty() && a.units.cloud.result.is_some());
    let panes: Vec<Pane> =
        h.state().layouts.pane_rects(h.state().arrangement()).into_iter().map(|p| p.0).collect();
    assert_eq!(panes.len(), 3, "{panes:?}");
    h.snapshot_options("layout_cloud", &snapshot_options());
}

/// A large cloud (6,040 points in 24 dimensions: all of its barcode takes minutes) is drawn as
/// soon as its points are read; its first barcode keeps about a million edges, says so, and
/// offers the full one with an estimate.
#[test]
fn a_large_cloud_is_drawn_at_once_and_its_first_barcode_takes_seconds() {
    let mut h = harness("rips/cyclooctane.csv");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while h.state().units.cloud.result.is_none() {
        assert!(std::time::Instant::now() < end, "the points were not drawn");
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let c = &h.state().units.cloud;
    assert!(c.pending && c.result.as_ref().is_some_and(|r| r.barcode.bars.is_empty()), "points first");
    let first = c.first.unwrap();
    assert!(first.all > 10 * first.edges, "{first:?}");
    wait_for(&mut h, "the first barcode", |a| a.jobs.is_empty() && !a.units.cloud.pending);
    let r = h.state().units.cloud.result.as_ref().unwrap();
    assert_eq!(r.opts.threshold, first.threshold);
    let within = r.cloud.distances.within(first.threshold).0;
    assert!((0.8..1.25).contains(&(within as f64 / first.edges as f64)), "{within} edges kept");
    assert!(!r.barcode.bars.is_empty());
    h.get_by_label_contains("A first barcode: edges up to");
    h.get_by_label_contains("Compute the full barcode (about");
    h.snapshot_options("cyclooctane_first_barcode", &snapshot_options());
}

/// A quick click on a slider, its press and release in one frame of a slow app (2 frames a
/// second), sets the value under the pointer.
#[test]
fn a_quick_click_on_a_slider_at_two_frames_a_second_sets_it() {
    let mut h = harness_at("coins.png", Vec2::new(1280.0, 800.0), 1.0, 0.5);
    wait_for(&mut h, "the coins", idle);
    let before = h.state().settings.mask_opacity;
    // The slider, not its value box beside it.
    let slider =
        h.get_all_by_label("opacity").map(|n| n.rect()).max_by(|a, b| a.width().total_cmp(&b.width()));
    let slider = slider.unwrap();
    let at = Pos2::new(slider.min.x + 0.2 * slider.width(), slider.center().y);
    one_frame(&mut h, vec![egui::Event::PointerMoved(at), button(at, true), button(at, false)]);
    settle(&mut h);
    let after = h.state().settings.mask_opacity;
    assert!(after < 0.3, "the slider moved to the click: {before} -> {after}");
    // A button's quick click still counts once.
    let colours = h.state().settings.mask_color;
    let auto = h.get_by_label("Auto colour").rect().center();
    h.state_mut().settings.mask_color = Some([1, 2, 3]);
    one_frame(&mut h, vec![egui::Event::PointerMoved(auto), button(auto, true), button(auto, false)]);
    settle(&mut h);
    assert_eq!(h.state().settings.mask_color, colours, "Auto colour was clicked");
}
