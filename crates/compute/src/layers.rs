//! Layers as a job: volumes shown over the image (a statistical map over an anatomy, a label
//! map over an image), read if need be and resampled to the image's grid through both
//! affines ([`topoview_core::field::resample`]): nearest-neighbour for labels, trilinear otherwise.

use super::{FieldSummary, Job, JobContext, JobError, Lane};
use std::path::PathBuf;
use std::sync::Arc;
use topoview_core::field::ScalarField;
use topoview_core::field::resample::{self, Interpolation, ResampleError};
use topoview_core::io::{self, OpenOptions};

/// Reading and placing layers.
pub const LAYERS: Lane = Lane("layers");

/// Where a layer's samples come from: its file, or the field already read (placing it again
/// on a new image, or with the other interpolation).
#[derive(Clone)]
pub enum LayerSource {
    File { opts: OpenOptions },
    Held(Arc<ScalarField>),
}

/// One layer to place: the app's id for it, its file, and whether it holds labels (None: as
/// the file says, or as its values suggest).
#[derive(Clone)]
pub struct LayerRequest {
    pub id: u64,
    pub path: PathBuf,
    pub source: LayerSource,
    pub labels: Option<bool>,
}

/// Places every layer asked for on `grid` (one job, so that one request never supersedes
/// another on the lane).
pub struct PlaceLayers {
    pub grid: Arc<ScalarField>,
    pub layers: Vec<LayerRequest>,
}

/// A layer on the image's grid.
pub struct PlacedLayer {
    pub id: u64,
    pub path: PathBuf,
    /// The layer as read, on its own grid.
    pub source: Arc<ScalarField>,
    /// Its samples at the image's voxels (NaN outside it).
    pub field: Arc<ScalarField>,
    /// Of `field`: the values the layer shows over the image.
    pub summary: FieldSummary,
    pub labels: bool,
}

/// Why a layer could not be placed: the file, and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("layer {}: {message}", path.display())]
pub struct LayerError {
    pub id: u64,
    pub path: PathBuf,
    pub message: String,
}

/// The layers placed, each or why not, on the grid they were placed on.
pub struct PlacedLayers {
    pub grid: Arc<ScalarField>,
    pub layers: Vec<Result<PlacedLayer, LayerError>>,
}

impl Job for PlaceLayers {
    type Output = PlacedLayers;

    fn lane(&self) -> Lane {
        LAYERS
    }

    fn run(self, cx: &JobContext) -> Result<PlacedLayers, JobError> {
        let total = (self.layers.len() * self.grid.len()) as u64;
        let progress = |n: u64| cx.report("placing layers", n, total);
        let ctl = cx.control(&progress);
        let mut placed = Vec::new();
        for r in self.layers {
            let failed = |message: String| LayerError { id: r.id, path: r.path.clone(), message };
            let source = match &r.source {
                LayerSource::Held(f) => f.clone(),
                LayerSource::File { opts } => match io::open_with(&r.path, opts, &ctl) {
                    Ok(f) => Arc::new(f),
                    Err(io::ReadError::Cancelled { .. }) => return Err(JobError::Cancelled),
                    // The reader's message names the file already.
                    Err(e) => {
                        placed.push(Err(LayerError { message: e.to_string(), ..failed(String::new()) }));
                        continue;
                    }
                },
            };
            let labels = r.labels.unwrap_or_else(|| source.labels || FieldSummary::of(&source).label_like);
            let how = if labels { Interpolation::Nearest } else { Interpolation::Linear };
            match resample::resample(&source, &self.grid, how, &ctl) {
                Ok(field) => placed.push(Ok(PlacedLayer {
                    id: r.id,
                    path: r.path,
                    source,
                    summary: FieldSummary::of(&field),
                    field: Arc::new(field),
                    labels,
                })),
                Err(ResampleError::Cancelled(_)) => return Err(JobError::Cancelled),
                Err(e) => placed.push(Err(failed(e.to_string()))),
            }
        }
        Ok(PlacedLayers { grid: self.grid, layers: placed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Choice};
    use std::sync::atomic::AtomicBool;
    use topoview_core::field::Samples;

    fn run(job: PlaceLayers) -> PlacedLayers {
        let backend = Backend::new(Choice::Cpu, None).unwrap();
        let cancel = AtomicBool::new(false);
        let report = |_: &'static str, _: u64, _: u64| {};
        let note = Default::default();
        let cx = JobContext { backend: &backend, cancel: &cancel, report: &report, note: &note };
        job.run(&cx).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_label_layer_is_placed_by_nearest_and_a_bad_file_is_named() {
        let grid = Arc::new(ScalarField::new(&[4, 4, 2], Samples::F32(vec![0.0; 32])).unwrap());
        // Labels 1..=4 on a 2x2x1 grid of 2 mm voxels centred at 0 and 2 mm: voxel 0 spans
        // [-1, 1) mm, so image voxel 0 reads it, voxels 1 and 2 the next, 3 lies outside.
        let ids = ScalarField::new(&[2, 2, 1], Samples::U8(vec![1, 2, 3, 4])).unwrap();
        let ids = Arc::new(ids.with_spacing([2.0, 2.0, 2.0]).unwrap());
        let missing = PathBuf::from("/nonexistent/stat_map.nii.gz");
        let layers = vec![
            LayerRequest { id: 7, path: "labels".into(), source: LayerSource::Held(ids), labels: None },
            LayerRequest {
                id: 8,
                path: missing.clone(),
                source: LayerSource::File { opts: Default::default() },
                labels: None,
            },
        ];
        let placed = run(PlaceLayers { grid: grid.clone(), layers });
        let first = placed.layers[0].as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert!(first.labels && first.id == 7);
        // Nearest keeps the ids whole: no 2.5 between labels 2 and 3.
        let at = |x, y, z| first.field.samples().get_f64(first.field.index(x, y, z));
        assert_eq!(
            [at(0, 0, 0), at(1, 0, 0), at(2, 0, 0), at(0, 1, 0), at(2, 2, 0)],
            [1.0, 2.0, 2.0, 3.0, 4.0]
        );
        assert!(at(3, 0, 0).is_nan() && at(0, 0, 1).is_nan());
        let err = placed.layers[1].as_ref().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("stat_map.nii.gz"), "{err}");
    }
}
