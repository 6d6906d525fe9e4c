//! V-paths counted: the paths leaving a critical k-cell downwards form a DAG on (k-1)-cells:
//! from a facet `a`, the path goes on through `a`'s gradient partner `b` (a k-cell) to `b`'s
//! other facets, and stops at critical (k-1)-cells. Paths split and merge (between saddles in
//! 3D their number can grow exponentially), so they are counted on the DAG in topological
//! order, never enumerated. The complex's arcs ([`super::complex`]) and the Morse boundary
//! ([`super::morse`]) are made of them.

use super::gradient::Gradient;
use super::grid::Cell;
// Cell ids hash well with a multiply; SipHash took a fifth of the arcs' time.
use rustc_hash::FxHashMap as HashMap;

/// Number of distinct V-paths from one critical cell to another. Packed to 8-byte alignment
/// (24 bytes, not 32): every arc, saddle-graph edge and made arc holds one. Read `count` by
/// value (`{ m.count }`); a reference to it would be unaligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(8))]
pub struct Multiplicity {
    /// The count modulo 2^128 (exact unless `overflowed`; its parity is always exact).
    pub count: u128,
    pub overflowed: bool,
}

impl Multiplicity {
    pub const ZERO: Multiplicity = Multiplicity { count: 0, overflowed: false };

    pub fn plus(self, other: Multiplicity) -> Multiplicity {
        let (count, o) = self.count.overflowing_add(other.count);
        Multiplicity { count, overflowed: self.overflowed || other.overflowed || o }
    }

    /// Paths through both: each of one's followed by each of the other's (mod 2^128, so the
    /// parity stays exact).
    pub fn times(self, other: Multiplicity) -> Multiplicity {
        let (count, o) = self.count.overflowing_mul(other.count);
        Multiplicity { count, overflowed: self.overflowed || other.overflowed || o }
    }

    pub fn is_odd(&self) -> bool {
        self.count % 2 == 1
    }
}

/// Critical (k-1)-cells reached by descending V-paths from the critical k-cell `sigma`, in
/// cell-id order, each with the number of paths to it and one of those paths as the cells it
/// visits (`sigma` first, the target last).
///
/// The path kept is a shortest one, and among those the one that, walked back from the target,
/// steps each time to the predecessor of smallest cell id. That choice depends on no traversal
/// order, so the GPU (kernels/msc.cu), which explores every saddle's DAG level by level on many
/// threads at once, finds the same path.
pub fn descending(g: &Gradient, sigma: Cell) -> Vec<(Cell, Multiplicity, Vec<Cell>)> {
    let grid = &g.grid;
    // The cells a path at `a` goes on to: the other facets of a's partner above it (at most 5,
    // kept on the stack: an allocation per step was half the arcs' time).
    let next = |a: Cell| -> Successors {
        let mut out = Successors { cells: [0; 5], n: 0 };
        if let Some(b) = g.partner(a).filter(|&b| grid.dim(b) > grid.dim(a)) {
            for f in grid.facets(b).filter(|&f| f != a) {
                out.cells[out.n as usize] = f;
                out.n += 1;
            }
        }
        out
    };
    SCRATCH.with_borrow_mut(|scratch| descend(g, sigma, next, scratch))
}

/// A cell of one saddle's DAG.
struct Node {
    cell: Cell,
    /// Steps from the saddle's facets (0 for them).
    depth: u32,
    /// Among the cells one step less deep that lead here, the smallest (the saddle for its
    /// facets).
    parent: Cell,
    /// Arcs into it from the DAG's cells not yet counted.
    waiting: u32,
    paths: Multiplicity,
}

/// Per thread, the traversal's map and lists, emptied between saddles but kept allocated:
/// fresh ones per saddle were millions of short allocations among the arcs' long-lived ones,
/// which left the heap fragmented (a third more resident memory than live data).
#[derive(Default)]
struct Scratch {
    /// Place in `nodes` of each cell reached.
    index: HashMap<Cell, u32>,
    /// The cells reached, in breadth-first order.
    nodes: Vec<Node>,
    /// Nodes whose every predecessor has been counted.
    ready: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn descend(
    g: &Gradient,
    sigma: Cell,
    next: impl Fn(Cell) -> Successors,
    scratch: &mut Scratch,
) -> Vec<(Cell, Multiplicity, Vec<Cell>)> {
    let Scratch { index, nodes, ready } = scratch;
    index.clear();
    nodes.clear();
    ready.clear();
    let one = Multiplicity { count: 1, overflowed: false };
    for s in g.grid.facets(sigma) {
        index.insert(s, nodes.len() as u32);
        nodes.push(Node { cell: s, depth: 0, parent: sigma, waiting: 0, paths: one });
    }
    // Breadth first: the nodes list is the queue, so the cells of one depth are all seen before
    // the next depth's, and a cell's parent is settled once its depth's cells are done.
    let mut i = 0;
    while i < nodes.len() {
        let (a, d) = (nodes[i].cell, nodes[i].depth);
        let mut succ = next(a);
        while let Some(w) = succ.pop() {
            match index.entry(w) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let n = &mut nodes[*e.get() as usize];
                    n.waiting += 1;
                    if n.depth == d + 1 {
                        n.parent = n.parent.min(a);
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(nodes.len() as u32);
                    let paths = Multiplicity { count: 0, overflowed: false };
                    nodes.push(Node { cell: w, depth: d + 1, parent: a, waiting: 1, paths });
                }
            }
        }
        i += 1;
    }
    // Paths are counted in a topological order (Kahn's): a node passes its count on once every
    // node before it has passed theirs. The DAG's sources are among the saddle's facets.
    ready.extend((0..nodes.len() as u32).filter(|&i| nodes[i as usize].waiting == 0));
    let mut out = Vec::new();
    while let Some(i) = ready.pop() {
        let (c, m) = (nodes[i as usize].cell, nodes[i as usize].paths);
        if g.is_critical(c) {
            out.push((c, m, path_to(g, sigma, c, index, nodes)));
            continue;
        }
        let mut succ = next(c);
        while let Some(w) = succ.pop() {
            let j = index[&w];
            let n = &mut nodes[j as usize];
            n.paths = n.paths.plus(m);
            n.waiting -= 1;
            if n.waiting == 0 {
                ready.push(j);
            }
        }
    }
    out.sort_by_key(|(c, _, _)| *c);
    out
}

/// The kept path from `sigma` to `target` ([`descending`]), walked back through the parents
/// with each step's gradient partner.
fn path_to(g: &Gradient, sigma: Cell, target: Cell, index: &HashMap<Cell, u32>, nodes: &[Node]) -> Vec<Cell> {
    let mut cells = vec![target];
    let mut at = &nodes[index[&target] as usize];
    while at.depth > 0 {
        let p = at.parent;
        cells.push(g.partner(p).expect("a path goes on through a paired cell"));
        cells.push(p);
        at = &nodes[index[&p] as usize];
    }
    cells.push(sigma);
    cells.reverse();
    cells
}

/// The successors of a cell on descending V-paths, popped from the end.
struct Successors {
    cells: [Cell; 5],
    n: u8,
}

impl Successors {
    fn pop(&mut self) -> Option<Cell> {
        self.n = self.n.checked_sub(1)?;
        Some(self.cells[self.n as usize])
    }
}
