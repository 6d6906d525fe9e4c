//! The viewer driven like a user, through egui_kittest: widgets are found by their labels, the
//! frames are rendered with wgpu (lavapipe on machines without a GPU), and the main states are
//! compared with the snapshots in tests/snapshots (`UPDATE_SNAPSHOTS=1` rewrites them).

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, SnapshotOptions};
use std::time::{Duration, Instant};
use topoview_compute::curve::chi_at;
use topoview_core::control::Control;
use topoview_core::topo::ecc::{EccOptions, NanPolicy, ecc};
use topoview_core::topo::smooth::{Smoothing, smooth};
use topoview_viewer::app::settings::Layout;
use topoview_viewer::app::{Startup, TopoApp};
use topoview_viewer::render::colormap::Colormap;

pub(crate) fn harness(file: &str) -> Harness<'static, TopoApp> {
    let path = crate::common::data(file);
    Harness::builder()
        .with_size(egui::Vec2::new(1280.0, 800.0))
        .wgpu()
        .build_eframe(move |cc| steady(TopoApp::new(cc, Startup { file: Some(path), ..Default::default() })))
}

/// How long a test waits for a condition before it calls the viewer stuck: far beyond what any
/// needs alone (a few seconds), so that a machine loaded by a build beside the suite slows the
/// tests without failing them.
const PATIENCE: Duration = Duration::from_secs(600);

/// Steps frames (the worker runs meanwhile) until `done` holds, then until the viewer is at
/// rest; panics after [`PATIENCE`].
pub(crate) fn wait_for(h: &mut Harness<'_, TopoApp>, what: &str, done: impl Fn(&TopoApp) -> bool) {
    let end = Instant::now() + PATIENCE;
    while !done(h.state()) {
        if Instant::now() >= end {
            let a = h.state();
            let jobs: Vec<_> = a.jobs.values().map(|j| j.what.clone()).collect();
            panic!("timed out waiting for {what}: jobs {jobs:?}, error {:?}", a.error);
        }
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    settle(h);
}

/// Steps frames until the viewer is at rest: no job running, the volume wholly on the GPU, and
/// the same picture rendered at least [`STILL`] apart (the 3D view draws coarse frames for 200 ms
/// after its camera moves, all alike). What a test reads or pictures then depends on the state
/// it set, not on how many frames a loaded machine managed. Panics after [`PATIENCE`].
/// (A test that must see that no job starts asks before settling, which would wait for it.)
pub(crate) fn settle(h: &mut Harness<'_, TopoApp>) {
    const STILL: Duration = Duration::from_millis(300);
    let end = Instant::now() + PATIENCE;
    let mut last: Option<(image::RgbaImage, Instant)> = None;
    loop {
        if Instant::now() >= end {
            let a = h.state();
            let jobs: Vec<_> = a.jobs.values().map(|j| j.what.clone()).collect();
            panic!("the viewer did not come to rest in {PATIENCE:?}: jobs {jobs:?}, error {:?}", a.error);
        }
        h.step();
        let app = h.state();
        if !app.jobs.is_empty() || app.upload.is_some_and(|p| p.planes < p.of) {
            last = None;
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        let now = h.render().expect("a frame renders");
        match &last {
            Some((picture, since)) if *picture == now => {
                if since.elapsed() >= STILL {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => last = Some((now, Instant::now())),
        }
    }
}

/// The app without the readouts that change from run to run (memory, frame and job times).
pub(crate) fn steady(mut app: TopoApp) -> TopoApp {
    app.volatile_readouts = false;
    app
}

pub(crate) fn idle(app: &TopoApp) -> bool {
    app.jobs.is_empty() && app.data.as_ref().is_some_and(|d| d.curve.is_some())
}

/// The snapshots other than `emri_smoothed` were taken with the status bar's readouts of memory,
/// frame and job times, which tests now leave out: they differ by a few hundred pixels there.
pub(crate) fn snapshot_options() -> SnapshotOptions {
    SnapshotOptions::new().max_failed_pixels(2500)
}

#[test]
fn opens_the_volume_and_the_threshold_drives_chi() {
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume and its curve", idle);
    let app = h.state();
    let d = app.data.as_ref().unwrap();
    assert_eq!(d.field.dims(), [197, 233, 189]);
    let curve = d.curve.as_ref().unwrap().ecc.clone();
    // The threshold starts at the suggested zero-crossing.
    let suggested = d.curve.as_ref().unwrap().suggested.unwrap();
    assert_eq!(d.threshold, suggested);
    h.get_by_label(&format!("χ = {}", chi_at(&curve, suggested)));
    h.snapshot_options("mni_grid", &snapshot_options());

    // Entering a threshold updates chi at once (nothing is recomputed).
    h.get_by_label("Threshold").set_value_accesskit(120.0);
    // Asked before settling, which would wait for a job to end.
    h.run_steps(2);
    assert!(h.state().jobs.is_empty(), "moving the threshold must not start a job");
    settle(&mut h);
    let d = h.state().data.as_ref().unwrap();
    assert_eq!(d.threshold, 120.0);
    h.get_by_label(&format!("χ = {}", chi_at(&curve, 120.0)));
    h.snapshot_options("mni_threshold_120", &snapshot_options());
}

#[test]
fn sigma_adds_the_smoothed_curve_and_can_be_shown() {
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the emri volume", idle);
    h.get_by_role_and_label(Role::Slider, "σ (voxels)").set_value_accesskit(1.5);
    wait_for(&mut h, "the smoothed curve", |a| a.data.as_ref().is_some_and(|d| d.smoothed.is_some()));
    let d = h.state().data.as_ref().unwrap();
    let s = d.smoothed.as_ref().unwrap();
    assert_eq!(s.sigma, 1.5);
    // The curve on screen is exactly the CPU reference of smoothing + ECC.
    let reference = smooth(&d.field, &Smoothing::voxels(1.5), &Control::default()).unwrap();
    let opts = EccOptions { nan: NanPolicy::Absent, ..Default::default() };
    assert_eq!(*s.curve.ecc, ecc(&reference, &opts, &Control::default()).unwrap());
    h.get_by_label("Show smoothed field").click();
    settle(&mut h);
    let d = h.state().data.as_ref().unwrap();
    assert!(d.show_smoothed);
    // The threshold, never chosen by hand, follows the suggestion of the curve on screen.
    if let Some(best) = d.smoothed.as_ref().unwrap().curve.suggested {
        assert_eq!(d.threshold, best);
    }
    assert_eq!(h.state().data.as_ref().unwrap().displayed().dtype(), topoview_core::field::Dtype::F32);
    h.snapshot_options("emri_smoothed", &snapshot_options());
}

#[test]
fn colormap_and_layout_switch_from_the_menus() {
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the emri volume", idle);
    // The File menu and its submenus render (every glyph of their labels must exist).
    h.get_by_label("File").click();
    settle(&mut h);
    h.get_by_label("Examples").hover();
    settle(&mut h);
    h.get_by_label("Gaussian random field…");
    h.key_press(egui::Key::Escape);
    settle(&mut h);
    h.get_by_label("Colormap").click();
    settle(&mut h);
    h.get_by_label("viridis").click();
    settle(&mut h);
    assert_eq!(h.state().settings.colormap, Colormap::Viridis);
    h.get_by_label("View").click();
    settle(&mut h);
    h.get_by_role_and_label(Role::RadioButton, "Axial").click();
    settle(&mut h);
    assert_eq!(h.state().settings.layout, Layout::Single(2));
    h.snapshot_options("emri_axial_viridis", &snapshot_options());
}

#[test]
fn superlevel_switch_recomputes_the_curve() {
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the emri volume", idle);
    h.get_by_label("Superlevel").click();
    h.run_steps(1);
    wait_for(&mut h, "the superlevel curve", idle);
    let d = h.state().data.as_ref().unwrap();
    let e = &d.curve.as_ref().unwrap().ecc;
    assert_eq!(e.filtration, topoview_core::topo::ecc::Filtration::Superlevel);
    assert!(e.thresholds.to_f64_vec().windows(2).all(|w| w[0] > w[1]));
}

#[test]
fn a_broken_file_shows_its_error_and_the_app_goes_on() {
    let mut h = harness("bad/truncated.nii.gz");
    let end = Instant::now() + PATIENCE;
    while h.state().error.is_none() {
        assert!(Instant::now() < end, "no error shown");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    settle(&mut h);
    let e = h.state().error.clone().unwrap();
    assert!(e.contains("truncated.nii.gz"), "{e}");
    assert!(h.state().data.is_none());
    h.get_by_label_contains("truncated.nii.gz");
    assert!(!h.state().jobs.contains_key(&topoview_compute::jobs::LOAD));
    // The app still opens the next file.
    h.state_mut().open(crate::common::data("coins.png"), Default::default());
    wait_for(&mut h, "coins", idle);
    assert!(h.state().error.is_none());
}

#[test]
fn a_tiff_whose_pages_share_one_strip_is_refused_in_the_viewer() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shared.tif");
    crate::common::shared_strip_tiff(&p, 64, 4096, 4096);
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins", idle);
    h.state_mut().open(p, Default::default());
    let end = Instant::now() + PATIENCE;
    while h.state().error.is_none() {
        assert!(Instant::now() < end, "no error shown");
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let e = h.state().error.clone().unwrap();
    assert!(e.contains("shared.tif") && e.contains("pages claim"), "{e}");
    // The field on screen stays.
    assert!(h.state().data.as_ref().is_some_and(|d| d.source.contains("coins")));
}

#[test]
fn the_random_field_example_is_generated_on_the_worker() {
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins", idle);
    h.get_by_label("File").click();
    settle(&mut h);
    h.get_by_label("Examples").hover();
    settle(&mut h);
    h.get_by_label("Gaussian random field…").click();
    settle(&mut h);
    h.get_by_label("2D").click();
    h.get_by_role_and_label(Role::Slider, "size (voxels per axis)").set_value_accesskit(64.0);
    settle(&mut h);
    h.get_by_label("Generate").click();
    h.run_steps(1);
    wait_for(&mut h, "the random field", |a| {
        idle(a) && a.data.as_ref().is_some_and(|d| d.field.shape() == [64, 64])
    });
    let d = h.state().data.as_ref().unwrap();
    assert!(d.source.starts_with("Gaussian random field 64x64"), "{}", d.source);
    assert_eq!(h.state().settings.grf.size, 64);
}

#[test]
fn the_3d_view_draws_each_mode_and_the_threshold_set_follows_the_threshold() {
    use topoview_viewer::render::scene3d::Mode;
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume and its curve", idle);
    // The 3D view alone, from the View menu.
    h.get_by_label("View").click();
    settle(&mut h);
    h.get_by_label("3D view").click();
    settle(&mut h);
    assert_eq!(h.state().settings.layout, Layout::Volume);
    h.snapshot_options("mni_3d_composite", &snapshot_options());
    // The mode from the view's own menu.
    h.get_by_label("mode").click();
    settle(&mut h);
    h.get_by_label("isosurface").click();
    settle(&mut h);
    assert_eq!(h.state().settings.view3d.mode, Mode::Isosurface);
    // Seen from the front, from the view menu.
    h.get_by_label("view").click();
    settle(&mut h);
    h.get_by_label("A: from the front (anterior)").click();
    settle(&mut h);
    let cam = h.state().settings.view3d.camera;
    assert_eq!((cam.yaw, cam.pitch), (90.0, 0.0));
    // A moved camera renders at a lower resolution for a moment; the snapshot wants the still one.
    std::thread::sleep(Duration::from_millis(400));
    settle(&mut h);
    h.snapshot_options("mni_3d_isosurface", &snapshot_options());
    // A transfer-function preset from the Display panel, scrolled into view.
    scroll_panel_at(&mut h, "Colormap", -300.0);
    h.get_by_label("presets").click();
    settle(&mut h);
    h.get_by_label("CT bone").click();
    settle(&mut h);
    assert_eq!(
        h.state().settings.view3d.transfer,
        topoview_viewer::render::transfer::Preset::CtBone.function()
    );
    h.state_mut().settings.view3d.mode = Mode::MaxIntensity;
    settle(&mut h);
    h.snapshot_options("mni_3d_mip", &snapshot_options());
    // The threshold set as voxels, with the slice planes, at two thresholds typed in the ECC
    // panel: the surface follows.
    h.state_mut().settings.view3d.mode = Mode::ThresholdVoxels;
    h.get_by_label("options").click();
    settle(&mut h);
    h.get_by_label("planes").click();
    h.key_press(egui::Key::Escape);
    for t in [62.0, 120.0] {
        h.get_by_label("Threshold").set_value_accesskit(t);
        settle(&mut h);
        assert_eq!(h.state().data.as_ref().unwrap().threshold, t);
        h.snapshot_options(format!("mni_3d_voxels_{t}"), &snapshot_options());
    }
    h.state_mut().settings.view3d.mode = Mode::ThresholdSurface;
    settle(&mut h);
    h.snapshot_options("mni_3d_threshold_surface_120", &snapshot_options());
}

#[test]
fn the_morse_smale_complex_is_drawn_and_simplified_under_the_slider() {
    // coins.png (116,352 pixels) is under the automatic size: its complex starts on its own.
    let mut h = harness("coins.png");
    wait_for(&mut h, "the complex of coins.png", |a| {
        a.jobs.is_empty() && a.data.as_ref().is_some_and(|d| d.displayed_msc().is_some())
    });
    let m = h.state().data.as_ref().unwrap().displayed_msc().unwrap();
    let (c, hier) = (&m.scene.analysis.complex, &m.scene.analysis.hierarchy);
    // A 2D image's starts at the elbow of its persistence curve, with the hierarchy's counts at
    // that level: a readable number of points (thousands at 5%).
    let span = m.scene.range.1 - m.scene.range.0;
    let elbow = topoview_viewer::app::dataset::elbow(&m.scene.analysis.diagram).unwrap();
    assert_eq!(m.level.threshold, elbow.clamp(0.01 * span, 0.5 * span));
    assert!(m.level.counts.iter().sum::<usize>() < 1000, "{:?}", m.level.counts);
    let at_start = m.level.counts;
    assert_eq!(at_start, hier.counts(c, m.level.steps));
    // Morse equality on a 2D box: minima - saddles + maxima = 1.
    assert_eq!(at_start[0] as i64 - at_start[1] as i64 + at_start[2] as i64, 1);
    let grouped = topoview_viewer::app::numbers::group;
    h.get_by_label(&format!(
        "{} minima · {} saddles · {} maxima",
        grouped(at_start[0]),
        grouped(at_start[1]),
        grouped(at_start[2])
    ));
    h.snapshot_options("coins_msc_elbow", &snapshot_options());

    // Raising the persistence to 30% cancels more pairs at once (no job runs).
    h.get_by_role_and_label(Role::Slider, "persistence").set_value_accesskit(30.0);
    // Asked before settling, which would wait for a job to end.
    h.run_steps(2);
    assert!(h.state().jobs.is_empty(), "the slider must not start a job");
    settle(&mut h);
    let m = h.state().data.as_ref().unwrap().displayed_msc().unwrap();
    assert!((m.level.threshold - 0.30 * span).abs() < 1e-6 * span);
    let at_30 = m.level.counts;
    assert!(at_30.iter().sum::<usize>() < at_start.iter().sum::<usize>(), "{at_30:?} vs {at_start:?}");
    assert_eq!(at_30[0] as i64 - at_30[1] as i64 + at_30[2] as i64, 1);
    h.snapshot_options("coins_msc_30pct", &snapshot_options());

    // The basins at 30%, as translucent labels: one label per live minimum.
    h.state_mut().units.msc.settings.labels = topoview_viewer::app::analyses::msc::LabelOverlay::Basins;
    settle(&mut h);
    h.snapshot_options("coins_msc_30pct_basins", &snapshot_options());
}

#[test]
fn the_complex_is_drawn_in_the_3d_view() {
    // The emri volume (40,960 voxels) gets its complex on its own.
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the complex of the emri volume", |a| {
        a.jobs.is_empty() && a.data.as_ref().is_some_and(|d| d.displayed_msc().is_some())
    });
    h.state_mut().settings.layout = Layout::Volume;
    h.get_by_role_and_label(Role::Slider, "persistence").set_value_accesskit(20.0);
    settle(&mut h);
    h.snapshot_options("emri_msc_3d", &snapshot_options());
    // Without the complex drawn, the same view has no marks.
    h.get_by_label("Draw over the slices").click();
    settle(&mut h);
    h.snapshot_options("emri_msc_3d_hidden", &snapshot_options());
}

#[test]
fn edges_between_pixels_are_drawn_on_the_cracks_and_follow_the_slice() {
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins.png", |a| {
        idle(a) && a.data.as_ref().is_some_and(|d| d.displayed_msc().is_some())
    });
    // The complex is off here so the edges are what the snapshot shows.
    h.state_mut().units.msc.settings.show = false;
    // (The side panel scrolls; its checkbox is below the fold at this window size.)
    h.state_mut().units.cracks.settings.show = true;
    wait_for(&mut h, "the crack strengths of coins.png", |a| {
        a.jobs.is_empty() && a.units.cracks.slice.is_some()
    });
    let app = h.state();
    let s = app.units.cracks.slice.as_ref().unwrap();
    // The same strengths as the library's, for the image on screen.
    let d = app.data.as_ref().unwrap();
    let [w, hh, _] = d.field.dims();
    let v = (0..d.field.len()).map(|i| d.field.samples().get_f64(i) as f32).collect();
    let img = topoview_core::topo::cracks::Image::grey(w, hh, v);
    let want = topoview_core::topo::cracks::cracks(&img, &s.opts, &Control::default()).unwrap();
    assert_eq!(*s.map, want);
    // What is drawn: the cracks at least 20% of the strongest as strong.
    let lowest = 0.2 * want.max_strength();
    let strong = want.strength.iter().flatten().filter(|&&x| x >= lowest).count();
    assert_eq!(app.units.cracks.drawn(), strong);
    h.snapshot_options("coins_cracks", &snapshot_options());

    // Closed curves only, by orientation, with the threshold set's boundary.
    {
        let c = &mut h.state_mut().units.cracks.settings;
        c.closed = true;
        c.set_boundary = true;
        c.color = topoview_viewer::app::analyses::cracks::CrackColor::Orientation;
    }
    settle(&mut h);
    let drawn = h.state().units.cracks.drawn();
    assert!(drawn > 0 && drawn != strong, "{drawn} cracks drawn");
    h.snapshot_options("coins_cracks_closed", &snapshot_options());
}

#[test]
fn edges_between_pixels_follow_the_axial_slice_of_a_volume() {
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the emri volume", idle);
    h.state_mut().units.cracks.settings.show = true;
    wait_for(&mut h, "the first slice's cracks", |a| a.jobs.is_empty() && a.units.cracks.slice.is_some());
    let z0 = h.state().units.cracks.slice.as_ref().unwrap().z;
    assert_eq!(z0, h.state().views.cursor[2]);
    h.state_mut().views.cursor[2] = z0 + 1;
    wait_for(&mut h, "the next slice's cracks", |a| {
        a.jobs.is_empty() && a.units.cracks.slice.as_ref().is_some_and(|s| s.z == z0 + 1)
    });
    assert!(h.state().units.cracks.drawn() > 0);
}

#[test]
fn betti_numbers_and_the_parts_of_the_set_follow_the_threshold() {
    use topoview_core::topo::betti::{betti, parts::parts};
    use topoview_core::topo::ecc::{Construction, Filtration};
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins.png", idle);
    h.state_mut().units.msc.settings.show = false;
    h.get_by_label("Betti curves").click();
    h.get_by_label("Components and holes").click();
    let explained = |t: f64| {
        move |a: &TopoApp| {
            a.jobs.is_empty()
                && a.units.explain.lines.is_some()
                && a.units.explain.shown.as_ref().is_some_and(|e| e.threshold == t)
        }
    };
    let t0 = h.state().data.as_ref().unwrap().threshold;
    wait_for(&mut h, "the Betti curves and the parts of coins.png", explained(t0));
    let field = h.state().data.as_ref().unwrap().field.clone();
    let curve = h.state().data.as_ref().unwrap().curve.as_ref().unwrap().ecc.clone();
    let b = betti(&field, &curve, &Control::default()).unwrap();
    let check = |h: &Harness<'_, TopoApp>, t: f64| {
        let n = topoview_compute::curve::passed(&curve, t) - 1;
        h.get_by_label(&format!("β0 = {}", b.b0[n]));
        h.get_by_label(&format!("β1 = {}", b.b1[n]));
        let p = parts(&field, Construction::TopCells, Filtration::Sublevel, t, &Control::default()).unwrap();
        assert_eq!((p.components as i64, p.voids as i64), (b.b0[n], b.b1[n]));
        assert_eq!(*h.state().units.explain.shown.as_ref().unwrap().parts, p);
    };
    check(&h, t0);
    h.snapshot_options("coins_betti_parts", &snapshot_options());

    // Moving the threshold relabels the set; the Betti curves are not recomputed.
    let lines = h.state().units.explain.lines.clone().unwrap();
    h.get_by_label("Threshold").set_value_accesskit(120.0);
    wait_for(&mut h, "the parts at 120", explained(120.0));
    assert!(std::sync::Arc::ptr_eq(&lines, h.state().units.explain.lines.as_ref().unwrap()));
    check(&h, 120.0);
    h.snapshot_options("coins_betti_parts_120", &snapshot_options());
}

#[test]
fn the_tunnels_alive_at_the_threshold_are_b1_and_listed() {
    use topoview_core::topo::betti::betti;
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the EMRI volume", idle);
    h.state_mut().units.msc.settings.show = false;
    h.get_by_label("Betti curves").click();
    h.get_by_label("Components and voids").click();
    wait_for(&mut h, "the tunnels", |a| {
        a.jobs.is_empty()
            && a.units.explain.tunnels.is_some()
            && a.units.explain.lines.is_some()
            && a.units.explain.shown.is_some()
    });
    let d = h.state().data.as_ref().unwrap();
    let (field, t) = (d.field.clone(), d.threshold);
    let curve = d.curve.as_ref().unwrap().ecc.clone();
    let b = betti(&field, &curve, &Control::default()).unwrap();
    let n = topoview_compute::curve::passed(&curve, t) - 1;
    assert_eq!(
        topoview_viewer::app::analyses::explain::alive_tunnels(&h.state().units.explain, h.state()).len()
            as i64,
        b.b1[n]
    );
    h.get_by_label(&format!("β1 = {}", b.b1[n]));
    h.get_by_label(&format!("Tunnels at the threshold: {} (yellow rings where born)", b.b1[n]));
    h.snapshot_options("emri_tunnels", &snapshot_options());
}

#[test]
fn the_scale_space_is_drawn_and_a_click_sets_threshold_and_sigma() {
    use topoview_viewer::app::analyses::scale_space::HEAT_MAP;
    let mut h = harness("coins.png");
    wait_for(&mut h, "coins.png", idle);
    h.state_mut().units.msc.settings.show = false;
    h.get_by_label("ECC scale-space (χ over threshold and σ)").click();
    settle(&mut h);
    let s = &mut h.state_mut().units.scale_space.settings;
    (s.sigma_max, s.step, s.thresholds) = (4.0, 0.5, 64);
    settle(&mut h);
    h.get_by_label("Compute 9 scales").click();
    wait_for(&mut h, "the scale-space", |a| a.jobs.is_empty() && a.units.scale_space.map.is_some());
    // The map is a view of its own, a tab beside the diagram.
    h.get_by_label("Scale-space").click();
    settle(&mut h);
    let m = h.state().units.scale_space.map.clone().unwrap();
    let field = h.state().data.as_ref().unwrap().field.clone();
    let (lo, hi) = h.state().data.as_ref().unwrap().summary.range.unwrap();
    assert_eq!(m.map.sigmas, (0..9).map(|k| k as f64 * 0.5).collect::<Vec<_>>());
    assert_eq!((m.map.thresholds.len(), m.map.thresholds[0], m.map.thresholds[63]), (64, lo, hi));
    // Each row is the ECC of the field smoothed on its own, read at the grid's thresholds.
    let opts = EccOptions { nan: NanPolicy::Absent, ..Default::default() };
    for (k, &sigma) in m.map.sigmas.iter().enumerate() {
        let f = if sigma == 0.0 {
            (*field).clone()
        } else {
            smooth(&field, &Smoothing::voxels(sigma), &Control::default()).unwrap()
        };
        let e = ecc(&f, &opts, &Control::default()).unwrap();
        let row: Vec<i64> = m.map.thresholds.iter().map(|&t| chi_at(&e, t)).collect();
        assert_eq!(m.map.chi[k], row, "σ = {sigma}");
        // The suggestion on the grid: the last threshold before χ first goes from + to −.
        let mut last = 0;
        let mut want = None;
        for (b, &c) in row.iter().enumerate().filter(|(_, c)| **c != 0) {
            if last > 0 && c < 0 {
                want = Some(m.map.thresholds[b - 1]);
                break;
            }
            last = c;
        }
        assert_eq!(m.map.suggested[k], want, "σ = {sigma}");
    }
    // On screen without scrolling at the harness's size (the click below lands on its centre).
    assert!(h.get_by_label(HEAT_MAP).rect().max.y < 780.0);
    h.snapshot_options("coins_scale_space", &snapshot_options());

    // A click in the middle of the map: the middle scale (row 4 of 9 from the top: σ = 2) and
    // the middle column (32 of 64).
    h.get_by_label(HEAT_MAP).click();
    settle(&mut h);
    let (a, want_t) = (h.state(), m.map.thresholds[32]);
    assert_eq!(a.sigma, 2.0);
    assert_eq!(a.data.as_ref().unwrap().threshold, want_t);
    wait_for(&mut h, "the field smoothed with σ = 2", |a| {
        a.jobs.is_empty() && a.data.as_ref().unwrap().displayed_sigma() == Some(2.0)
    });
    let d = h.state().data.as_ref().unwrap();
    assert_eq!(d.threshold, want_t, "the threshold picked stays once the smoothed curve arrives");
}

fn harness_with(startup: Startup) -> Harness<'static, TopoApp> {
    Harness::builder()
        .with_size(egui::Vec2::new(1280.0, 800.0))
        .wgpu()
        .build_eframe(move |cc| steady(TopoApp::new(cc, startup)))
}

#[test]
fn a_session_round_trips_and_one_whose_file_moved_says_which() {
    use topoview_core::topo::ecc::Construction;
    use topoview_viewer::app::session::{Session, save};
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the EMRI volume", idle);
    // A state far from the defaults: vertices, σ = 1.5 shown, a threshold picked by hand, a
    // colormap, a layout, a camera, a crosshair, a zoom, a simplification level.
    {
        let a = h.state_mut();
        a.settings.construction = Construction::Vertices;
        a.settings.colormap = Colormap::Viridis;
        a.settings.layout = Layout::Grid;
        a.settings.view3d.camera.yaw = 33.0;
        a.settings.view3d.camera.pitch = -12.5;
        a.units.explain.settings.betti = true;
        a.views.cursor = [20, 30, 4];
        a.views.nav[1].zoom = 2.5;
        a.views.nav[1].pan = [3.0, -4.0];
        a.recompute();
    }
    h.get_by_role_and_label(Role::Slider, "σ (voxels)").set_value_accesskit(1.5);
    wait_for(&mut h, "the smoothed field's complex", |a| {
        a.jobs.is_empty() && a.data.as_ref().is_some_and(|d| d.smoothed.is_some() && d.msc.is_some())
    });
    h.get_by_label("Show smoothed field").click();
    settle(&mut h);
    wait_for(&mut h, "the complex of the smoothed field", |a| {
        a.jobs.is_empty() && a.data.as_ref().is_some_and(|d| d.show_smoothed && d.displayed_msc().is_some())
    });
    {
        let d = h.state_mut().data.as_mut().unwrap();
        d.pick_threshold(20.0);
        d.window = (3.0, 90.0);
        let m = d.displayed_msc_mut().unwrap();
        // Far from the default level (5% of the range).
        let t = 0.2 * (m.scene.range.1 - m.scene.range.0);
        m.set_threshold(t);
    }
    settle(&mut h);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    save(h.state(), &path).unwrap();
    let before = Session::of(h.state(), &path);
    let (threshold, level) = {
        let d = h.state().data.as_ref().unwrap();
        (d.threshold, d.displayed_msc().unwrap().level.threshold)
    };

    let mut r = harness_with(Startup { session: Some(path.clone()), ..Default::default() });
    wait_for(&mut r, "the restored session", |a| {
        a.jobs.is_empty()
            && a.data
                .as_ref()
                .is_some_and(|d| d.displayed_sigma() == Some(1.5) && d.displayed_msc().is_some())
    });
    let a = r.state();
    let d = a.data.as_ref().unwrap();
    assert_eq!(d.field.dims(), h.state().data.as_ref().unwrap().field.dims());
    assert_eq!((d.threshold, d.threshold_chosen, d.window), (threshold, true, (3.0, 90.0)));
    assert_eq!(d.displayed_msc().unwrap().level.threshold, level);
    assert_eq!(d.smoothed.as_ref().unwrap().curve.ecc.construction, Construction::Vertices);
    assert_eq!((a.views.cursor, a.views.nav[1].zoom, a.views.nav[1].pan), ([20, 30, 4], 2.5, [3.0, -4.0]));
    // Everything a session holds comes back as it was: the camera too, the 3D view having been
    // drawn (and framed) before the save and after the restore.
    assert!(before.view.iso.is_some(), "the 3D view was framed before the save");
    assert_eq!(Session::of(a, &path), before);
    assert_eq!(a.settings.view3d.camera, h.state().settings.view3d.camera);
    assert_eq!(a.settings.view3d.camera.yaw, 33.0);

    // The same session with its file gone: the file is named, the settings restored.
    let gone = before.to_json().replace(
        &crate::common::data("pydicom_emri_small.nii.gz").display().to_string(),
        "/nowhere/emri.nii.gz",
    );
    let moved = dir.path().join("moved.json");
    std::fs::write(&moved, gone.replace("\"relative\": \"", "\"relative\": \"missing/")).unwrap();
    let mut m = harness_with(Startup { session: Some(moved), ..Default::default() });
    settle(&mut m);
    let err = m.state().error.clone().unwrap_or_default();
    assert!(err.contains("/nowhere/emri.nii.gz") && err.contains("moved"), "{err}");
    assert_eq!((m.state().settings.colormap, m.state().settings.layout), (Colormap::Viridis, Layout::Grid));

    // A file that is not a session: the demo volume opens, and the banner says why, by name.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"format\": \"something else\"}").unwrap();
    let mut j = harness_with(Startup { session: Some(junk.clone()), ..Default::default() });
    wait_for(&mut j, "the demo volume", idle);
    let err = j.state().error.clone().unwrap_or_default();
    assert!(err.contains(&junk.display().to_string()) && err.contains("not a topoview session"), "{err}");
}

#[test]
fn the_components_are_coloured_in_the_3d_voxels_mode() {
    use topoview_viewer::render::scene3d::Mode;
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the EMRI volume", idle);
    {
        let a = h.state_mut();
        a.units.msc.settings.show = false;
        a.settings.layout = Layout::Volume;
        a.settings.view3d.mode = Mode::ThresholdVoxels;
    }
    h.get_by_label("Components and voids").click();
    wait_for(&mut h, "the parts", |a| a.jobs.is_empty() && a.units.explain.shown.is_some());
    settle(&mut h);
    h.snapshot_options("emri_3d_components", &snapshot_options());
}

/// How far world x (mm) grows from a point of the axial view to one 150 points to its right.
fn world_x_rightwards(h: &mut Harness<'_, TopoApp>) -> f64 {
    let slider = h.get_by_role_and_label(Role::Slider, "z").rect();
    let mut x = [0.0; 2];
    for (i, dx) in [100.0, 250.0].into_iter().enumerate() {
        h.hover_at(egui::pos2(slider.min.x + dx, slider.max.y + 170.0));
        settle(h);
        let app = h.state();
        let hover = app.views.hover.expect("the pointer is over the axial view");
        x[i] = app.data.as_ref().unwrap().field.world(hover.voxel.map(|v| v as f64))[0];
    }
    x[1] - x[0]
}

/// The MNI template (stored RAS) and NeuroVault's statistical map (stored LAS: x runs to the
/// left) show the subject's right on the same side of the axial view: the right
/// (neurological), or the left with the radiological setting; the voxel under the pointer is
/// the file's own.
#[test]
fn volumes_stored_either_way_show_the_hemispheres_on_the_same_side() {
    use topoview_viewer::app::views::DisplayAxes;
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume", idle);
    let field = h.state().data.as_ref().unwrap().field.clone();
    assert_eq!(DisplayAxes::of(&field, false).plane(2).letters, Some(['L', 'R', 'A', 'P']));
    assert_eq!(DisplayAxes::of(&field, true).plane(2).letters, Some(['R', 'L', 'A', 'P']));
    assert_eq!(DisplayAxes::of(&field, false).plane(0).letters, Some(['P', 'A', 'S', 'I']));
    assert!(world_x_rightwards(&mut h) > 20.0, "MNI: the subject's right on the right");
    h.snapshot_options("mni_orientation_letters", &snapshot_options());

    h.state_mut().open(crate::common::data("nilearn_neurovault_10426.nii.gz"), Default::default());
    wait_for(&mut h, "the statistical map", |a| {
        idle(a) && a.data.as_ref().is_some_and(|d| d.field.dims() == [53, 63, 46])
    });
    let stat = h.state().data.as_ref().unwrap().field.clone();
    assert!(stat.affine.unwrap()[0][0] < 0.0, "stored with x running left");
    assert!(world_x_rightwards(&mut h) > 20.0, "statistical map: the subject's right on the right");
    // The voxel under the pointer is exact: its value is the file's at that index.
    let hover = h.state().views.hover.unwrap();
    let [x, y, z] = hover.voxel;
    assert_eq!(hover.value, stat.samples().get_f64(stat.index(x, y, z)));
    h.snapshot_options("neurovault_stat_map_ras", &snapshot_options());

    h.get_by_label("View").click();
    settle(&mut h);
    h.get_by_label("Radiological (right on the left)").click();
    settle(&mut h);
    h.key_press(egui::Key::Escape);
    settle(&mut h);
    assert!(h.state().settings.radiological);
    assert!(world_x_rightwards(&mut h) < -20.0, "radiological: the subject's right on the left");
}

/// Pixels of the slice area (left of the ECC panel) within 3 levels of `rgb`.
fn pixels_of(h: &mut Harness<'_, TopoApp>, rgb: [u8; 3]) -> usize {
    pixels_in(h, rgb, 640, 60)
}

/// Pixels left of `x_end` and below `y_start` within 3 levels of `rgb`.
fn pixels_in(h: &mut Harness<'_, TopoApp>, rgb: [u8; 3], x_end: u32, y_start: u32) -> usize {
    let img = h.render().unwrap();
    img.enumerate_pixels()
        .filter(|(x, y, p)| {
            *x < x_end && *y > y_start && (0..3).all(|i| (p.0[i] as i32 - rgb[i] as i32).abs() <= 3)
        })
        .count()
}

/// The mask's colour is chosen against the colormap (a red mask vanished on cool-warm), and
/// the outline draws the set's boundary, opaque, even with the fill's opacity at 0.
#[test]
fn the_mask_stands_out_on_cool_warm_and_its_outline_draws_the_boundary() {
    let mut h = harness("coins.png");
    wait_for(&mut h, "the coins", idle);
    {
        let s = &mut h.state_mut().settings;
        s.colormap = Colormap::CoolWarm;
        s.mask_opacity = 0.0;
    }
    settle(&mut h);
    let rgb = h.state().settings.mask_rgb();
    assert_eq!(rgb, Colormap::CoolWarm.contrasting());
    assert_eq!(pixels_of(&mut h, rgb), 0, "no fill, no outline: nothing in the mask's colour");
    h.get_by_label("Outline").click();
    settle(&mut h);
    assert!(h.state().settings.mask_outline);
    let outline = pixels_of(&mut h, rgb);
    assert!(outline > 500, "the coins' boundaries are drawn: {outline} pixels");
    h.snapshot_options("coins_mask_outline_coolwarm", &snapshot_options());
    // The fill at full opacity covers more than the outline does.
    h.state_mut().settings.mask_opacity = 1.0;
    settle(&mut h);
    let filled = pixels_of(&mut h, rgb);
    assert!(filled > 2 * outline, "fill {filled} against outline {outline} pixels");
}

/// Scrolls the ECC panel by `dy` points with the wheel over the widget labelled `over`.
pub(crate) fn scroll_panel_at(h: &mut Harness<'_, TopoApp>, over: &str, dy: f32) {
    let at = h.get_by_label(over).rect().center();
    h.hover_at(at);
    settle(h);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, dy),
        modifiers: Default::default(),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
    });
    settle(h);
}

/// A primary click at `pos`, press and release in one frame (a double-click must come within
/// 0.3 s: use a harness with short steps).
pub(crate) fn click_at(h: &mut Harness<'_, TopoApp>, pos: egui::Pos2) {
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Default::default(),
        });
    }
    h.step();
}

/// The threshold the plot's hover readout names at `pos`, checking the χ it gives there.
pub(crate) fn hovered_threshold(h: &mut Harness<'_, TopoApp>, pos: egui::Pos2) -> f64 {
    use egui_kittest::kittest::NodeT;
    h.hover_at(pos);
    settle(h);
    // A label made of coloured runs carries its text as the node's value.
    let label = h
        .query_all_by_label_contains("")
        .filter_map(|n| n.accesskit_node().label().or(n.accesskit_node().value()))
        .find(|l| l.starts_with("threshold "))
        .unwrap_or_else(|| panic!("no hover readout at {pos:?}"));
    let (t, chi) =
        label.trim_start_matches("threshold ").split_once(":  χ = ").unwrap_or_else(|| panic!("{label:?}"));
    let t: f64 = t.parse().unwrap();
    let d = h.state().data.as_ref().unwrap();
    assert_eq!(chi.parse::<i64>().unwrap(), d.curve.as_ref().unwrap().chi_at(t), "{label}");
    assert!(d.curve.as_ref().unwrap().ecc.thresholds.to_f64_vec().contains(&t), "a value the field takes");
    t
}

/// The ECC plot as a reader uses it: the legend is a row above the plot (it covers nothing),
/// hovering reads out the threshold and χ at the nearest value, the wheel zooms the threshold
/// axis around the pointer without scrolling the panel, and a double-click shows the whole
/// curve again and leaves the threshold where it was.
#[test]
fn the_plot_reads_out_zooms_and_resets_without_moving_the_threshold() {
    let path = crate::common::data("coins.png");
    let mut h = Harness::builder()
        .with_size(egui::Vec2::new(1280.0, 800.0))
        .with_step_dt(1.0 / 60.0)
        .wgpu()
        .build_eframe(move |cc| steady(TopoApp::new(cc, Startup { file: Some(path), ..Default::default() })));
    wait_for(&mut h, "the coins", idle);
    // The plot lies between its legend and the readout row under it.
    let legend = h.get_by_label("original").rect();
    let below = h.get_by_label("hover the plot to read the curves at a threshold").rect();
    let entry = h.get_by_label("Threshold").rect();
    assert!(legend.max.y < below.min.y);
    let y = (legend.max.y + below.min.y) / 2.0;
    let (a, b) = (egui::pos2(below.min.x + 120.0, y), egui::pos2(below.min.x + 220.0, y));
    let ta = hovered_threshold(&mut h, a);
    let tb = hovered_threshold(&mut h, b);
    assert!(tb > ta, "thresholds grow to the right: {ta} {tb}");
    let threshold = h.state().data.as_ref().unwrap().threshold;

    // Zoom in around a: a keeps its threshold, b comes closer to it.
    h.hover_at(a);
    settle(&mut h);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 200.0),
        modifiers: Default::default(),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
    });
    settle(&mut h);
    assert_eq!(h.get_by_label("Threshold").rect(), entry, "the panel did not scroll");
    let zoomed = hovered_threshold(&mut h, b);
    assert!(zoomed < tb - 10.0, "b shows a threshold nearer a: {zoomed} (was {tb})");
    assert_eq!(h.state().data.as_ref().unwrap().threshold, threshold, "zooming moves no threshold");

    // A double-click resets the view and keeps the threshold.
    click_at(&mut h, b);
    click_at(&mut h, b);
    settle(&mut h);
    assert_eq!(h.state().data.as_ref().unwrap().threshold, threshold, "double-click keeps the threshold");
    assert_eq!(hovered_threshold(&mut h, b), tb, "the whole curve again");
    h.snapshot_options("coins_plot_hover", &snapshot_options());
    // One click sets it.
    click_at(&mut h, a);
    settle(&mut h);
    assert_eq!(h.state().data.as_ref().unwrap().threshold, ta);
}

/// With the desktop's dialog unavailable (no D-Bus session in the tests, or the setting),
/// File, Open and Ctrl+E open topoview's own dialog: folders to walk, the files the filter admits,
/// a name to type, and the action runs on the chosen path.
#[test]
fn file_dialogs_fall_back_to_the_in_app_one_and_shortcuts_open_them() {
    let mut h = harness("pydicom_emri_small.nii.gz");
    wait_for(&mut h, "the emri volume", idle);
    h.state_mut().settings.builtin_dialogs = true;
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    settle(&mut h);
    assert!(h.state().dialogs.open.is_some(), "Ctrl+O opens the dialog");
    // Walk to the test data by the folder field, pick the coins and open them.
    let data = crate::common::data("coins.png").parent().unwrap().to_path_buf();
    h.state_mut().dialogs.open.as_mut().unwrap().go(data.clone());
    settle(&mut h);
    h.get_by_label("coins.png").click();
    settle(&mut h);
    h.snapshot_options("in_app_open_dialog", &snapshot_options());
    h.get_by_label("Open").click();
    settle(&mut h);
    assert!(h.state().dialogs.open.is_none());
    wait_for(&mut h, "the coins", |a| idle(a) && a.data.as_ref().is_some_and(|d| d.field.dims()[0] == 384));

    // Ctrl+E: the curve as CSV, under the suggested name, into a folder of our own.
    let tmp = tempfile::tempdir().unwrap();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::E);
    settle(&mut h);
    let dialog = h.state_mut().dialogs.open.as_mut().expect("Ctrl+E asks where");
    assert_eq!(dialog.name, "coins_ecc.csv");
    dialog.go(tmp.path().to_path_buf());
    settle(&mut h);
    h.get_by_label("Save").click();
    let out = tmp.path().join("coins_ecc.csv");
    wait_for(&mut h, "the export", |_| out.exists());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("threshold,chi"), "{text}");
    // The menu shows the shortcut beside its entry.
    h.get_by_label("File").click();
    settle(&mut h);
    h.get_by_label_contains("Open…");
}

/// A 4D file opens at its first volume with a volume slider; moving the slider reads that
/// volume from the file (equal to reading it with `--volume`), keeping the view and a chosen
/// threshold.
#[test]
fn a_4d_file_has_a_volume_slider() {
    use topoview_core::io::{OpenOptions, open};
    let path = crate::common::data("nibabel_example4d.nii.gz");
    let mut h = harness("nibabel_example4d.nii.gz");
    wait_for(&mut h, "the 4D file", idle);
    let d = h.state().data.as_ref().unwrap();
    assert_eq!(d.field.series, Some(topoview_core::field::Series { index: 0, count: 2 }));
    assert!(h.state().message.as_deref().is_none_or(|m| !m.contains("--volume")), "no restart advice");
    h.state_mut().views.cursor = [10, 20, 5];
    h.get_by_label("Threshold").set_value_accesskit(300.0);
    settle(&mut h);
    h.get_by_role_and_label(Role::Slider, "volume (of 2, 4D file)").set_value_accesskit(1.0);
    wait_for(&mut h, "volume 1", |a| {
        idle(a) && a.data.as_ref().is_some_and(|d| d.field.series.is_some_and(|s| s.index == 1))
    });
    let app = h.state();
    let d = app.data.as_ref().unwrap();
    let second = open(&path, &OpenOptions { volume: Some(1), ..Default::default() }).unwrap();
    assert_eq!(d.field.samples(), second.samples());
    assert_ne!(d.field.samples(), open(&path, &OpenOptions::default()).unwrap().samples());
    assert_eq!(app.views.cursor, [10, 20, 5], "the view stays");
    assert_eq!(d.threshold, 300.0, "the chosen threshold stays");
    h.snapshot_options("example4d_volume_1", &snapshot_options());
}

/// What the user sees is what they chose: the title names the file, a typed threshold survives
/// a switch of the analysis settings, which can be reset to the command line's defaults, the
/// status bar says a job was cancelled, and window and level follow a drag on the histogram's
/// lines and a right-drag on a slice.
#[test]
fn settings_title_cancel_and_window_dragging() {
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume", idle);
    assert_eq!(h.state().title(), "mni152_t1_09a.nii.gz - topoview");
    h.get_by_label("Threshold").set_value_accesskit(120.0);
    settle(&mut h);
    h.get_by_label("Superlevel").click();
    h.run_steps(1);
    wait_for(&mut h, "the superlevel curve", idle);
    assert_eq!(h.state().data.as_ref().unwrap().threshold, 120.0, "the typed threshold stays");
    h.get_by_label("Defaults").click();
    h.run_steps(1);
    wait_for(&mut h, "the default curve", idle);
    assert!(!h.state().settings.superlevel);
    assert!(h.query_by_label("Defaults").is_none(), "shown only when the settings differ");

    // A job cancelled from the status bar says so.
    {
        let app = h.state_mut();
        app.sigma = 8.0;
        app.resmooth();
        app.cancel_by_user(topoview_compute::jobs::SMOOTH);
    }
    settle(&mut h);
    h.get_by_label("Smoothing, σ = 8: cancelled");

    // The histogram's max line dragged to the middle lowers the window's max only.
    scroll_panel_at(&mut h, "Colormap", -300.0);
    let before = h.state().data.as_ref().unwrap().window;
    let auto = h.get_by_label("Auto").rect();
    let full = h.get_by_label("Full").rect();
    let y = auto.max.y + 40.0;
    let right = full.max.x + 60.0;
    h.drag_at(egui::pos2(right, y));
    h.run_steps(1);
    h.hover_at(egui::pos2(right - 150.0, y));
    h.run_steps(1);
    h.drop_at(egui::pos2(right - 150.0, y));
    settle(&mut h);
    let after = h.state().data.as_ref().unwrap().window;
    assert_eq!(after.0, before.0);
    assert!(after.1 < before.1 - 20.0, "{before:?} -> {after:?}");

    // A right-drag across a slice widens the window; down it lowers the level.
    let slider = h.get_by_role_and_label(Role::Slider, "z").rect();
    let start = egui::pos2(slider.min.x + 150.0, slider.max.y + 150.0);
    let button = |pressed, pos| egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Secondary,
        pressed,
        modifiers: Default::default(),
    };
    h.hover_at(start);
    h.event(button(true, start));
    h.run_steps(1);
    let end = start + egui::vec2(80.0, 40.0);
    h.hover_at(end);
    h.run_steps(1);
    h.event(button(false, end));
    settle(&mut h);
    let dragged = h.state().data.as_ref().unwrap().window;
    assert!(dragged.1 - dragged.0 > after.1 - after.0, "wider: {after:?} -> {dragged:?}");
    assert!(dragged.0 + dragged.1 < after.0 + after.1, "lower level: {after:?} -> {dragged:?}");
}

/// A field of a few non-negative integers opens as a label map: categorical colours (each id
/// its own, drawn as the palette says), "label" under the cursor, and no curve until asked;
/// "Treat as intensities" brings the curve. A file whose header says "labels" (NIfTI intent
/// 1002, as topoview writes its label volumes) is one whatever its values.
#[test]
fn label_maps_get_a_palette_a_readout_and_no_curve_over_ids() {
    use topoview_core::field::{Samples, ScalarField};
    use topoview_viewer::render::colormap::label_colour;
    let tmp = tempfile::tempdir().unwrap();
    let (w, hgt) = (60, 40);
    let ids: Vec<u8> = (0..w * hgt).map(|i| ((i % w) / 12) as u8).collect();
    let field = ScalarField::new(&[w, hgt], Samples::U8(ids)).unwrap();
    let path = tmp.path().join("regions.nii");
    topoview_core::io::nifti::write_nifti1(&path, &field).unwrap();
    let mut h = Harness::builder()
        .with_size(egui::Vec2::new(1280.0, 800.0))
        .wgpu()
        .build_eframe(move |cc| steady(TopoApp::new(cc, Startup { file: Some(path), ..Default::default() })));
    wait_for(&mut h, "the label map", |a| a.jobs.is_empty() && a.data.is_some());
    let d = h.state().data.as_ref().unwrap();
    assert!(d.labels && d.curve.is_none(), "no curve over label ids");
    assert_eq!(h.state().settings.colormap, Colormap::Labels);
    h.state_mut().mask_on = false;
    settle(&mut h);
    let img = h.render().unwrap();
    for k in 1..5 {
        let c = label_colour(k);
        let n = img.pixels().filter(|p| (0..3).all(|i| (p.0[i] as i32 - c[i] as i32).abs() <= 2)).count();
        assert!(n > 1000, "label {k} drawn in its colour: {n} pixels");
    }
    h.snapshot_options("label_map", &snapshot_options());
    h.get_by_label("Treat as intensities").click();
    h.run_steps(1);
    wait_for(&mut h, "the curve", idle);
    assert!(!h.state().data.as_ref().unwrap().labels);
    assert_ne!(h.state().settings.colormap, Colormap::Labels);

    // Label volumes topoview writes carry the intent code, and open as label maps.
    let blobs =
        topoview_core::io::open(&crate::common::data("nipy_some_blobs.nii"), &Default::default()).unwrap();
    let a = topoview_core::topo::msc::analyse(&blobs, &Default::default()).unwrap();
    let basins = topoview_core::topo::msc::simplified::Simplified::new(&blobs, &a, Some(0.5))
        .label_volumes()
        .unwrap()
        .basins;
    assert!(basins.labels);
    let out = tmp.path().join("basins.nii.gz");
    topoview_core::io::nifti::write_nifti1(&out, &basins).unwrap();
    assert!(topoview_core::io::open(&out, &Default::default()).unwrap().labels);
}

/// Pixels of the slice area (left of the ECC panel) that differ between two renders.
fn changed_pixels(a: &image::RgbaImage, b: &image::RgbaImage) -> usize {
    a.enumerate_pixels().zip(b.pixels()).filter(|((x, y, p), q)| *x < 640 && *y > 60 && p != q).count()
}

/// A statistical map (NeuroVault, 53x63x46 at 3 mm, stored LAS) over the MNI template (1 mm,
/// RAS): resampled through both affines, so that at every voxel centre the two grids share
/// the layer reads the map's own value; drawn with its own opacity and threshold; read out
/// under the pointer; and swapped with the image by "Analyse" (the ECC moves to it). A label
/// layer is resampled by nearest neighbour: only its ids appear.
#[test]
fn a_layer_lies_over_the_image_through_both_affines_with_its_own_style() {
    use std::sync::Arc;
    use topoview_core::field::affine::{inverse, transform_point};
    use topoview_core::field::{Samples, ScalarField};
    let stat_path = crate::common::data("nilearn_neurovault_10426.nii.gz");
    let startup = Startup {
        file: Some(crate::common::data("mni152_t1_09a.nii.gz")),
        layers: vec![stat_path.clone()],
        ..Default::default()
    };
    let mut h = harness_with(startup);
    wait_for(&mut h, "the image and its layer", |a| idle(a) && a.units.layers.list.len() == 1);
    let mni = h.state().data.as_ref().unwrap().field.clone();
    let stat = topoview_core::io::open(&stat_path, &Default::default()).unwrap();
    {
        let l = &h.state().units.layers.list[0];
        assert_eq!(l.field.dims(), mni.dims());
        assert!(!l.labels && l.style.colormap == Colormap::CoolWarm);
        // Voxel centres of the map that fall on voxel centres of the template: there the
        // interpolated layer is the map's sample itself.
        let to_mni = inverse(&mni.affine.unwrap()).unwrap();
        let mut shared = 0;
        for k in (0..46).step_by(3) {
            for j in (0..63).step_by(3) {
                for i in (0..53).step_by(3) {
                    let world = stat.world([i as f64, j as f64, k as f64]);
                    let p = transform_point(&to_mni, world);
                    let v = p.map(|c| c.round());
                    let on_grid = (0..3)
                        .all(|a| (p[a] - v[a]).abs() < 1e-4 && v[a] >= 0.0 && v[a] < mni.dims()[a] as f64);
                    if on_grid {
                        let want = stat.samples().get_f64(stat.index(i, j, k));
                        let got = l.value_at(v.map(|c| c as usize));
                        assert!((got - want).abs() < 1e-4, "map voxel ({i},{j},{k}): {got} vs {want}");
                        shared += 1;
                    }
                }
            }
        }
        assert!(shared > 500, "{shared} shared voxel centres checked");
    }
    // The ECC stays on the image, and the list says so.
    let d = h.state().data.as_ref().unwrap();
    assert!(Arc::ptr_eq(&d.field, &mni) && d.curve.as_ref().is_some_and(|c| !c.ecc.chi.is_empty()));
    h.get_by_label_contains("the ECC and the analyses are of this one");
    h.state_mut().mask_on = false;
    settle(&mut h);
    h.snapshot_options("mni_with_stat_map_layer", &snapshot_options());
    let shown = h.render().unwrap();
    h.state_mut().units.layers.list[0].style.visible = false;
    settle(&mut h);
    let hidden = h.render().unwrap();
    let drawn = changed_pixels(&shown, &hidden);
    assert!(drawn > 5_000, "the map covers {drawn} pixels");
    h.state_mut().units.layers.list[0].style.visible = true;
    h.state_mut().units.layers.list[0].style.threshold = 5.0;
    settle(&mut h);
    let strong = changed_pixels(&h.render().unwrap(), &hidden);
    assert!(strong > 0 && strong < drawn / 2, "only |z| > 5 drawn: {strong} of {drawn} pixels");
    h.state_mut().units.layers.list[0].style.opacity = 0.0;
    settle(&mut h);
    assert_eq!(changed_pixels(&h.render().unwrap(), &hidden), 0, "opacity 0 draws nothing");
    h.state_mut().units.layers.list[0].style.opacity = 0.8;

    // The readout names the layer and its value at the voxel under the pointer.
    let slider = h.get_by_role_and_label(Role::Slider, "z").rect();
    h.hover_at(egui::pos2(slider.min.x + 150.0, slider.max.y + 170.0));
    settle(&mut h);
    let voxel = h.state().views.hover.unwrap().voxel;
    let v = h.state().units.layers.list[0].value_at(voxel);
    let readout = format!(
        "nilearn_neurovault_10426.nii.gz: value {}",
        topoview_core::export::format_threshold(v, topoview_core::field::Dtype::F32)
    );
    h.get_by_label_contains(&readout);

    // A label layer: 3 regions of 40 mm cubes in MNI space, written as topoview writes labels.
    let tmp = tempfile::tempdir().unwrap();
    let ids: Vec<u8> = (0..4 * 4 * 4).map(|i| (i % 4) as u8).collect();
    let mut regions = ScalarField::new(&[4, 4, 4], Samples::U8(ids)).unwrap();
    regions.affine = Some([
        [40.0, 0.0, 0.0, -60.0],
        [0.0, 40.0, 0.0, -90.0],
        [0.0, 0.0, 40.0, -50.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    regions.labels = true;
    let regions_path = tmp.path().join("regions.nii.gz");
    topoview_core::io::nifti::write_nifti1(&regions_path, &regions).unwrap();
    h.state_mut().units.layers.add(regions_path);
    wait_for(&mut h, "the label layer", |a| a.jobs.is_empty() && a.units.layers.list.len() == 2);
    let l = &h.state().units.layers.list[1];
    assert!(l.labels && l.style.colormap == Colormap::Labels);
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..l.field.len() {
        let v = l.field.samples().get_f64(i);
        if !v.is_nan() {
            seen.insert(v as i64);
            assert_eq!(v.fract(), 0.0, "nearest keeps ids whole");
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    settle(&mut h);
    h.get_by_label_contains("regions.nii.gz: label");

    // "Analyse" on the map: it becomes the image (its own grid), the template a layer on it.
    // The list shows the top layer first: the map's button is the second.
    h.get_all_by_label("Analyse").nth(1).unwrap().scroll_to_me();
    h.run_steps(3);
    h.get_all_by_label("Analyse").nth(1).unwrap().click();
    wait_for(&mut h, "the swap", |a| {
        idle(a)
            && a.units.layers.list.len() == 2
            && a.data.as_ref().is_some_and(|d| d.field.dims() == [53, 63, 46])
    });
    let names: Vec<String> = h.state().units.layers.list.iter().map(|l| l.name()).collect();
    assert!(names.contains(&"mni152_t1_09a.nii.gz".to_string()), "{names:?}");
    // The former image lies over the map as faint gray context, not hiding it.
    let former = h.state().units.layers.list.iter().find(|l| l.name() == "mni152_t1_09a.nii.gz").unwrap();
    assert!(former.style.colormap == Colormap::Gray && former.style.opacity < 0.5);
    h.state_mut().mask_on = false;
    settle(&mut h);
    h.snapshot_options("stat_map_analysed_under_mni", &snapshot_options());
    assert!(h.state().units.layers.list.iter().all(|l| l.field.dims() == [53, 63, 46]));

    // A session keeps the layers, their label choice and style.
    h.state_mut().units.layers.list[0].style.opacity = 0.3;
    let saved: Vec<_> = h.state().units.layers.list.iter().map(|l| (l.name(), l.labels, l.style)).collect();
    let session = tmp.path().join("layers.json");
    topoview_viewer::app::session::save(h.state(), &session).unwrap();
    let mut again = harness_with(Startup { session: Some(session), ..Default::default() });
    wait_for(&mut again, "the session's layers", |a| idle(a) && a.units.layers.list.len() == 2);
    let restored: Vec<_> =
        again.state().units.layers.list.iter().map(|l| (l.name(), l.labels, l.style)).collect();
    assert_eq!(restored, saved);
}

/// Pixels of the cloud's scatter (left of the panel, below the controls) in colour `c`.
fn scatter_pixels(h: &mut Harness<'_, TopoApp>, c: egui::Color32) -> usize {
    pixels_in(h, [c.r(), c.g(), c.b()], 800, 90)
}

/// Points taken in the viewer from the bundled MRI (400 voxels of {f >= 150}, seed 3: the
/// points whose barcode Ripser computed for tests/it/rips.rs) have Ripser's barcode bar for bar;
/// a point file opens the same way; clicking a bar picks it, moves the radius into it and
/// lights its simplices; the complex drawn has every pair within the radius.
#[test]
fn point_clouds_show_ripsers_barcode_and_a_clicked_bar_lights_its_simplices() {
    use topoview_viewer::app::analyses::cloud::{TakeForm, TakeKind};
    let mut h = harness("mni152_t1_09a.nii.gz");
    wait_for(&mut h, "the MNI volume", idle);
    {
        let a = h.state_mut();
        a.settings.superlevel = true;
        a.data.as_mut().unwrap().threshold = 150.0;
        a.units.cloud.take =
            TakeForm { kind: TakeKind::Set, index: None, relative: 0.05, count: 400, seed: 3 };
        a.units.cloud.maxdim = 2;
    }
    wait_for(&mut h, "the superlevel curve", idle);
    scroll_panel_at(&mut h, "Euler characteristic curve", -3000.0);
    h.get_by_label("Rips persistence of points from the image").click();
    settle(&mut h);
    h.get_by_label("Compute the barcode").click();
    wait_for(&mut h, "the MRI points' barcode", |a| a.units.cloud.result.is_some() && a.jobs.is_empty());
    let r = h.state().units.cloud.result.as_ref().unwrap();
    assert!(h.state().units.cloud.shown);
    assert_eq!(r.barcode.bars, crate::common::ripser_bars("mni152_set150_400_dim2"));
    assert!(r.cloud.what.contains("400 points in 3 dimensions"), "{}", r.cloud.what);
    h.get_by_label_contains("400 points in 3 dimensions");

    // A click in the barcode picks the bar under it (near the radius axis's 0, in the H0
    // rows, which all start there) and moves the radius into it.
    let panes = h.state().layouts.pane_rects(h.state().arrangement());
    let (_, barcode) = panes
        .iter()
        .find(|(p, _)| *p == topoview_viewer::app::tiles::Pane::of("point cloud", "Barcode"))
        .unwrap();
    click_at(&mut h, egui::pos2(barcode.left() + 31.0, barcode.top() + 40.0));
    settle(&mut h);
    let c = &h.state().units.cloud;
    let i = c.selected.expect("a bar is picked");
    let bar = c.result.as_ref().unwrap().barcode.bars[i];
    assert_eq!(bar.dim, 0);
    let mid = if bar.death.is_finite() { (bar.birth + bar.death) / 2.0 } else { bar.birth };
    assert_eq!(c.radius, mid);
    h.get_by_label_contains(&format!(
        "H{} bar [{}",
        bar.dim,
        topoview_viewer::app::numbers::short(bar.birth.into())
    ));
    h.get_by_label_contains("created by the point");
    let red = topoview_viewer::app::analyses::cloud::PICKED;
    let lit = scatter_pixels(&mut h, red);
    assert!(lit > 20, "the picked bar's simplices are drawn: {lit} pixels");
    h.state_mut().units.cloud.selected = None;
    settle(&mut h);
    assert_eq!(scatter_pixels(&mut h, red), 0, "nothing picked, nothing in the picked colour");

    // The edges drawn are every pair of points within the radius.
    let r = h.state().units.cloud.result.as_ref().unwrap();
    let d = &r.cloud.distances;
    let radius = h.state().units.cloud.radius;
    let within = (1..d.len())
        .flat_map(|i| (0..i).map(move |j| (i, j)))
        .filter(|&(i, j)| d.get(i, j) <= radius)
        .count();
    assert_eq!(h.state().units.cloud.drawn.as_ref().unwrap().edges_total, within);

    // A distance matrix file opens in the same view (File > Open routes it by its name), its
    // points placed by classical MDS, its barcode Ripser's.
    h.state_mut().units.cloud.maxdim = 2;
    h.state_mut().open(crate::common::data("rips/sphere_3_192.lower_distance_matrix"), Default::default());
    wait_for(&mut h, "the sphere's barcode", |a| {
        a.jobs.is_empty() && a.units.cloud.result.as_ref().is_some_and(|r| r.cloud.path.is_some())
    });
    let r = h.state().units.cloud.result.as_ref().unwrap();
    assert_eq!(r.barcode.bars, crate::common::ripser_bars("sphere_3_192_dim2"));
    assert!(r.cloud.embedded.is_some());
    assert_eq!(h.state().title(), "sphere_3_192.lower_distance_matrix - topoview");
    h.snapshot_options("sphere_cloud_barcode", &snapshot_options());
    // Back to the image: the MRI is still there.
    h.get_by_label("Back to the image").click();
    settle(&mut h);
    assert!(!h.state().units.cloud.shown && h.state().data.is_some());
}
