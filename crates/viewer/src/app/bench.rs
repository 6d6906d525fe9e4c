//! Frame-time benchmark of the real window (`topoview FILE --bench-frames N [--bench-sigma S]`):
//! scrolls the axial slice one step per frame, first with the worker idle, then while smoothing
//! and its ECC run, and prints frame-time statistics and the time from the sigma change to the
//! new curve. Not a test: it prints figures for docs/PERFORMANCE.md.

use super::views::ViewState;
use std::time::Instant;

pub struct FrameBench {
    frames: usize,
    sigma: Option<f64>,
    launched: Option<Instant>,
    idle: Vec<f32>,
    busy: Vec<f32>,
    /// Frame intervals while the volume was being uploaded to the GPU, and the time each
    /// frame spent writing it.
    upload: Vec<f32>,
    upload_steps: Vec<f32>,
    /// Time spent in the app's own frame code (layout, events; not the rendering), per phase.
    ui_idle: Vec<f32>,
    ui_busy: Vec<f32>,
    smoothing_started: Option<Instant>,
    smoothing_seconds: Option<f64>,
    start_smoothing: bool,
    done: bool,
}

impl FrameBench {
    pub fn new(frames: usize, sigma: Option<f64>, launched: Option<Instant>) -> FrameBench {
        FrameBench {
            frames,
            sigma,
            launched,
            idle: Vec::new(),
            busy: Vec::new(),
            upload: Vec::new(),
            upload_steps: Vec::new(),
            ui_idle: Vec::new(),
            ui_busy: Vec::new(),
            smoothing_started: None,
            smoothing_seconds: None,
            start_smoothing: false,
            done: false,
        }
    }

    pub fn first_frame(&self) {
        if let Some(t) = self.launched {
            println!("first frame: {:.0} ms after launch", t.elapsed().as_secs_f64() * 1000.0);
        }
    }

    /// Called on each frame during which the volume's upload goes on, with the time the
    /// frame spent on it.
    pub fn uploading(&mut self, dt: Option<f32>, step_ms: f32) {
        self.upload.extend(dt);
        self.upload_steps.push(step_ms);
    }

    /// Called when the first field's texture is uploaded (the data are on screen next frame).
    pub fn uploaded(&mut self) {
        if let Some(t) = self.launched.take() {
            println!("volume uploaded: {:.0} ms after launch", t.elapsed().as_secs_f64() * 1000.0);
        }
    }

    pub fn smoothed(&mut self) {
        if let Some(t) = self.smoothing_started {
            self.smoothing_seconds.get_or_insert(t.elapsed().as_secs_f64());
        }
    }

    /// Records how long the app's `ui` took this frame.
    pub fn ui_time(&mut self, ms: f32) {
        if self.done || self.idle.is_empty() {
            return;
        }
        if self.smoothing_started.is_none() { self.ui_idle.push(ms) } else { self.ui_busy.push(ms) }
    }

    /// True once, on the frame where the smoothing job should be submitted.
    pub fn wants_smoothing(&mut self) -> bool {
        std::mem::take(&mut self.start_smoothing)
    }

    /// Called every frame with the time since the previous one; `depth` is the volume's z size
    /// (None until a field is shown).
    pub fn step(
        &mut self,
        dt: Option<f32>,
        views: &mut ViewState,
        sigma: &mut f64,
        depth: Option<usize>,
        ctx: &egui::Context,
    ) {
        ctx.request_repaint();
        let (Some(dt), Some(nz)) = (dt, depth) else { return };
        if self.done {
            return;
        }
        views.cursor[2] = (views.cursor[2] + 1) % nz.max(1);
        if self.idle.len() < self.frames {
            self.idle.push(dt);
            return;
        }
        match (self.sigma, self.smoothing_started) {
            (Some(s), None) => {
                *sigma = s;
                self.smoothing_started = Some(Instant::now());
                self.start_smoothing = true;
                return;
            }
            (Some(_), Some(_)) if self.smoothing_seconds.is_none() && self.busy.len() < 100 * self.frames => {
                self.busy.push(dt);
                return;
            }
            _ => {}
        }
        self.done = true;
        report("while the volume uploads to the GPU: frame interval", &self.upload);
        report("while the volume uploads to the GPU: upload time per frame", &self.upload_steps);
        report("scrolling, worker idle: frame interval", &self.idle);
        report("scrolling, worker idle: app ui() time", &self.ui_idle);
        if self.sigma.is_some() {
            report("scrolling while smoothing + ECC run: frame interval", &self.busy);
            report("scrolling while smoothing + ECC run: app ui() time", &self.ui_busy);
        }
        if let (Some(s), Some(t)) = (self.sigma, self.smoothing_seconds) {
            println!("sigma {s}: change to new curve in {t:.3} s");
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

fn report(what: &str, times: &[f32]) {
    if times.is_empty() {
        println!("{what}: no frames");
        return;
    }
    let mut t = times.to_vec();
    t.sort_by(f32::total_cmp);
    let q = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    let mean = t.iter().sum::<f32>() / t.len() as f32;
    println!(
        "{what}: {} frames, mean {mean:.2} ms, median {:.2}, p95 {:.2}, max {:.2}",
        t.len(),
        q(0.5),
        q(0.95),
        t[t.len() - 1]
    );
}
