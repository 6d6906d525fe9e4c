//! The viewer's Rips job: points from a file, an image or an earlier result, their distances
//! (`topoview_core::io::points::distances`, which the command line calls too), an MDS placement
//! for a matrix, and the barcode through the backend.

use super::{Job, JobContext, JobError, Lane};
use std::path::PathBuf;
use std::sync::Arc;
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::io::points::{self, PointData, PointFormat, describe, distances};
use topoview_core::topo::rips::image_points::{ImagePointsError, ImageTake, image_points};
use topoview_core::topo::rips::{self, Barcode, Distances, RipsError, RipsOptions};

/// Rips persistence of point clouds in the viewer.
pub const RIPS: Lane = Lane("rips");

/// Where the points come from.
#[derive(Clone)]
pub enum CloudSource {
    /// A point cloud or distance matrix file.
    File { path: PathBuf, format: PointFormat },
    /// Points taken from an image (named `name` in what the result says).
    Image { field: Arc<ScalarField>, name: String, take: ImageTake },
    /// The points of an earlier result, again (other options).
    Held(Arc<Cloud>),
}

/// What the points are, held between runs: the data, their distances, where to draw them.
pub struct Cloud {
    pub path: Option<PathBuf>,
    /// In words: "4096 points in 9 dimensions (o3_4096.point_cloud)".
    pub what: String,
    pub data: PointData,
    pub distances: Distances,
    /// Where a distance matrix's points are drawn: a classical MDS embedding (points are
    /// drawn at their own coordinates).
    pub embedded: Option<Vec<[f64; 3]>>,
}

/// A threshold that keeps about `edges` of the cloud's shortest edges (the quantile of a
/// sample of at most a million pairs), or None when the whole complex has no more edges than
/// that. The cost of a barcode grows much faster than its edges: the viewer's first barcode of
/// a large cloud keeps a few seconds' worth and offers the rest on request.
pub fn threshold_for_edges(d: &Distances, edges: usize) -> Option<f32> {
    let all = d.lower();
    if all.len() <= edges {
        return None;
    }
    let step = all.len().div_ceil(1 << 20);
    let mut sample: Vec<f32> = all.iter().step_by(step).copied().filter(|x| x.is_finite()).collect();
    let k = (edges as f64 / all.len() as f64 * sample.len() as f64) as usize;
    let k = k.min(sample.len().checked_sub(1)?);
    let (_, t, _) = sample.select_nth_unstable_by(k, f32::total_cmp);
    Some(*t)
}

/// Computes the barcode of a cloud (reading or taking the points first when they are new).
pub struct RipsJob {
    pub source: CloudSource,
    pub opts: RipsOptions,
}

pub struct RipsResult {
    pub cloud: Arc<Cloud>,
    pub opts: RipsOptions,
    /// Sorted by dimension, birth and death.
    pub barcode: Barcode,
}

/// Why points could not be had: the file (or image) and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("{name}: {message}")]
pub struct CloudError {
    pub name: String,
    pub message: String,
}

/// Reads or takes the points of a cloud and their distances, without a barcode: the viewer
/// draws them while their barcode computes. On the Rips lane (a new cloud supersedes it).
pub struct CloudJob {
    pub source: CloudSource,
    /// The edges a first barcode may keep, when one is wanted (see [`FirstBarcode`]).
    pub first_edges: Option<usize>,
}

/// A cloud's points, and the threshold of its first barcode when one was asked for and the
/// whole complex has more edges than that.
pub struct CloudPoints {
    pub cloud: Arc<Cloud>,
    pub first: Option<FirstBarcode>,
}

/// A large cloud's first barcode: its edges up to `threshold` (`edges` of the `all` edges
/// within the enclosing radius, past which the full barcode changes nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstBarcode {
    pub threshold: f32,
    pub edges: usize,
    pub all: usize,
}

impl FirstBarcode {
    /// The first barcode of `d` keeping about `edges` edges; None when all of them are fewer.
    /// Three passes over the distances: done on the worker, not where the points are shown.
    pub fn of(d: &Distances, edges: usize) -> Option<FirstBarcode> {
        let threshold = threshold_for_edges(d, edges)?;
        Some(FirstBarcode { threshold, edges: d.within(threshold).0, all: d.within(d.enclosing_radius()).0 })
    }
}

impl Job for CloudJob {
    type Output = CloudPoints;

    fn lane(&self) -> Lane {
        RIPS
    }

    fn run(self, cx: &JobContext) -> Result<CloudPoints, JobError> {
        let cloud = staged(cx, |ctl, set| take(self.source, ctl, set))?;
        let first = self.first_edges.and_then(|e| FirstBarcode::of(&cloud.distances, e));
        Ok(CloudPoints { cloud, first })
    }
}

/// Runs `f` with a [`Control`] whose progress names the stage `f` last set.
fn staged<T>(
    cx: &JobContext,
    f: impl FnOnce(&Control, &dyn Fn(&'static str)) -> Result<T, JobError>,
) -> Result<T, JobError> {
    let stage = std::sync::Mutex::new("reading the points");
    let progress = |n: u64| cx.report(*stage.lock().unwrap_or_else(|e| e.into_inner()), n, 0);
    let ctl = cx.control(&progress);
    let set = |s: &'static str| *stage.lock().unwrap_or_else(|e| e.into_inner()) = s;
    f(&ctl, &set)
}

impl Job for RipsJob {
    type Output = RipsResult;

    fn lane(&self) -> Lane {
        RIPS
    }

    fn run(self, cx: &JobContext) -> Result<RipsResult, JobError> {
        staged(cx, |ctl, set| self.barcode(cx, ctl, set))
    }
}

impl RipsJob {
    fn barcode(
        self,
        cx: &JobContext,
        ctl: &Control,
        set: &dyn Fn(&'static str),
    ) -> Result<RipsResult, JobError> {
        let cloud = take(self.source, ctl, set)?;
        set("computing the barcode");
        let failed = |e: RipsError| match e {
            RipsError::Cancelled(_) => JobError::Cancelled,
            e => JobError::Failed(Box::new(CloudError { name: cloud.name(), message: e.to_string() })),
        };
        let (barcode, ran) = cx.backend.rips(&cloud.distances, &self.opts, ctl).map_err(failed)?;
        cx.note(ran.fallback);
        Ok(RipsResult { cloud, opts: self.opts, barcode: barcode.sorted() })
    }
}

impl Cloud {
    /// The file's name, or what the points are.
    pub fn name(&self) -> String {
        self.path.as_ref().map_or_else(|| self.what.clone(), |p| p.display().to_string())
    }

    /// The number of coordinates of each point (None: a distance matrix).
    pub fn dim(&self) -> Option<usize> {
        match &self.data {
            PointData::Points { dim, .. } => Some(*dim),
            PointData::LowerDistances(_) => None,
        }
    }
}

/// Reads or takes the points, and their distances.
fn take(source: CloudSource, ctl: &Control, stage: &dyn Fn(&'static str)) -> Result<Arc<Cloud>, JobError> {
    let fail =
        |name: &str, message: String| JobError::Failed(Box::new(CloudError { name: name.into(), message }));
    let (path, data, from) = match source {
        CloudSource::File { path, format } => match points::read(&path, format, ctl) {
            Ok(d) => (Some(path), d, None),
            Err(topoview_core::io::ReadError::Cancelled { .. }) => return Err(JobError::Cancelled),
            // The reader's message names the file already.
            Err(e) => return Err(JobError::Failed(Box::new(e))),
        },
        CloudSource::Image { field, name, take } => {
            let (p, what) = image_points(&field, take, ctl).map_err(|e| match e {
                ImagePointsError::Msc(topoview_core::topo::msc::MscError::Cancelled(_)) => {
                    JobError::Cancelled
                }
                e => fail(&name, e.to_string()),
            })?;
            if p.is_empty() {
                return Err(fail(&name, format!("no {what}")));
            }
            (None, PointData::Points { coords: p.coords, dim: p.dim }, Some(format!("{what} of {name}")))
        }
        CloudSource::Held(c) => return Ok(c),
    };
    let name = path.as_ref().map_or_else(|| from.clone().unwrap_or_default(), |p| p.display().to_string());
    stage("computing the distances");
    let d = distances(&data, ctl).map_err(|e| match e {
        RipsError::Cancelled(_) => JobError::Cancelled,
        e => fail(&name, e.to_string()),
    })?;
    let mut what = describe(&data, &d);
    if let Some(from) = from {
        what = format!("{what}: {from}");
    }
    let embedded = match &data {
        PointData::Points { .. } => None,
        PointData::LowerDistances(_) => {
            stage("placing the points (classical MDS)");
            Some(rips::embed::classical_mds(&d, ctl).map_err(|_| JobError::Cancelled)?)
        }
    };
    Ok(Arc::new(Cloud { path, what, data, distances: d, embedded }))
}
