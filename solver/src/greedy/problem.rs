//! The solver's input: the problem as plain arrays ([`Problem`]: pod classes, nodes' free
//! capacity, the class × node feasibility and score matrices, conflicts and inter-pod rules),
//! what makes one invalid ([`SolverError`]), and the callback for scores that depend on a
//! node's usage ([`Rescore`]).
//!
//! Input: built by the caller (`src/batch/` translates the cluster into it). Output: the
//! problem checked ([`Problem::validate`]) before a solve reads it.
//!
//! Upstream counterpart: none (kube-scheduler reads its cache of API objects, one pod at a
//! time).

use super::Placed;
use crate::lp::Guide;
use crate::objective::Objective;
use crate::topology::InterPod;

/// One pod class: interchangeable pods with the same requests and feasibility.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassSpec {
    /// How many pods of this class to place.
    pub count: u32,
    /// Their priority (higher is placed first).
    pub priority: i32,
    /// Requests per resource (`Problem::resources` entries, each ≥ 0).
    pub requests: Vec<i64>,
    /// At most this many pods of this class on one node (e.g. 1 for required anti-affinity of
    /// the class to itself on `kubernetes.io/hostname`); `None`: no limit.
    pub max_per_node: Option<u32>,
}

/// Two classes whose pods may not share a domain of a topology: required pod anti-affinity
/// (either class's term selects the other's pods; a class may conflict with itself) or, with the
/// topology that gives every node its own domain, conflicting host ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    /// One class.
    pub a: usize,
    /// The other class (may equal `a`: at most one pod of the class per domain).
    pub b: usize,
    /// The topology (row of [`Problem::domains`]).
    pub topology: usize,
}

/// The domain value of a node that lacks a topology's label: such a node is in no domain, so no
/// conflict applies on it (as kube-scheduler's anti-affinity on a node without the key).
pub const NO_DOMAIN: u32 = u32::MAX;

/// The whole assignment problem, as plain arrays. Matrices are row-major.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Problem {
    /// Number of resources (columns of `free` and length of each class's `requests`).
    pub resources: usize,
    /// Number of nodes.
    pub nodes: usize,
    /// The pod classes, in the caller's queue order.
    pub classes: Vec<ClassSpec>,
    /// Free capacity, `nodes × resources` (may be negative on an overcommitted node).
    pub free: Vec<i64>,
    /// Whether a pod of the class may go on the node, `classes × nodes`.
    pub feasible: Vec<bool>,
    /// The score of the node for the class (higher is better), `classes × nodes`.
    pub score: Vec<i32>,
    /// Pods already on nodes (their usage is already in `free`) that the relocation step may
    /// move to another node where their class is feasible. They are not counted in
    /// [`ClassSpec::count`].
    pub initial: Vec<Placed>,
    /// Number of topologies (rows of `domains`).
    pub topologies: usize,
    /// Each node's domain per topology, `topologies × nodes` ([`NO_DOMAIN`]: no label).
    pub domains: Vec<u32>,
    /// Pairs of classes that may not share a domain. Pods that are already on nodes are not
    /// counted here (the caller's feasibility matrix has them); the solver enforces the
    /// conflicts between the pods it places. A class with a conflict is never moved by
    /// relocation.
    pub conflicts: Vec<Conflict>,
    /// Quotas from the LP stage ([`crate::lp::lp_guide`]): when set, a first pass places each
    /// class's pods only on node groups with quota left, then the usual pass places the rest.
    pub guide: Option<Guide>,
    /// Inter-pod rules over counts of matching pods per domain of [`Problem::domains`]
    /// (topology spread, required and preferred pod (anti-)affinity); see
    /// [`crate::topology`]. Domain ids must then be below `nodes`.
    pub inter_pod: InterPod,
    /// What the LP stage, the exact MIP and the choice among strategies maximize per tier
    /// ([`crate::objective`]).
    pub objective: Objective,
    /// The cluster's capacity per resource that [`Objective::Resources`] takes shares of
    /// (empty: the nodes' total free capacity).
    pub capacity: Vec<i64>,
    /// The pods in the caller's queue order, as their classes (one entry per pod; a class
    /// appears as often as it has pods): with [`ClassOrder::Given`](super::ClassOrder::Given)
    /// the greedy first places the pods one by one in this order, as kube-scheduler's queue
    /// would (empty: class by class in the order of [`Problem::classes`]).
    pub queue: Vec<usize>,
}

impl Problem {
    /// Checks the dimensions and that requests are not negative.
    pub fn validate(&self) -> Result<(), SolverError> {
        let dim = |what: &'static str, expected: Option<usize>, found: usize| match expected {
            Some(e) if e == found => Ok(()),
            Some(e) => Err(SolverError::Dimension { what, expected: e, found }),
            None => Err(SolverError::TooLarge { what }),
        };
        let cells = self.classes.len().checked_mul(self.nodes);
        dim("free capacity entries", self.nodes.checked_mul(self.resources), self.free.len())?;
        dim("feasibility entries", cells, self.feasible.len())?;
        dim("score entries", cells, self.score.len())?;
        if self.queue.iter().any(|&c| c >= self.classes.len()) {
            return Err(SolverError::TooLarge { what: "class of a queue entry" });
        }
        if let Some(p) =
            self.initial.iter().find(|p| p.class >= self.classes.len() || p.node >= self.nodes)
        {
            return Err(SolverError::InitialOutOfRange { class: p.class, node: p.node });
        }
        dim("domain entries", self.topologies.checked_mul(self.nodes), self.domains.len())?;
        if !self.capacity.is_empty() {
            dim("capacity entries", Some(self.resources), self.capacity.len())?;
        }
        if let Some(c) = self.conflicts.iter().find(|c| {
            c.a >= self.classes.len() || c.b >= self.classes.len() || c.topology >= self.topologies
        }) {
            return Err(SolverError::ConflictOutOfRange { a: c.a, b: c.b, topology: c.topology });
        }
        if !self.inter_pod.is_empty() {
            if self.domains.iter().any(|&d| d != NO_DOMAIN && d as usize >= self.nodes) {
                return Err(SolverError::TooLarge {
                    what: "domain id (at most the number of nodes)",
                });
            }
            self.inter_pod.validate(self.classes.len(), self.nodes, self.topologies)?;
        }
        if let Some(guide) = &self.guide {
            dim("nodes of the guide", Some(self.nodes), guide.group_of_node.len())?;
            dim("quota entries", self.classes.len().checked_mul(guide.groups), guide.quota.len())?;
            if guide.group_of_node.iter().any(|&g| g >= guide.groups) {
                return Err(SolverError::TooLarge { what: "group of a node" });
            }
        }
        for (c, class) in self.classes.iter().enumerate() {
            dim("requests of a class", Some(self.resources), class.requests.len())?;
            if let Some((r, &value)) = class.requests.iter().enumerate().find(|(_, v)| **v < 0) {
                return Err(SolverError::NegativeRequest { class: c, resource: r, value });
            }
        }
        Ok(())
    }

    /// The entries of `free` that belong to `node`.
    pub(super) fn free_row(&self, node: usize) -> std::ops::Range<usize> {
        node * self.resources..(node + 1) * self.resources
    }
}

/// Invalid input to the solver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    /// An array does not have the length the problem's dimensions call for.
    #[error("{what}: expected {expected}, found {found}")]
    Dimension {
        /// Which array.
        what: &'static str,
        /// The length the dimensions call for.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// The dimensions multiply beyond `usize`.
    #[error("{what}: the dimensions are too large")]
    TooLarge {
        /// Which array.
        what: &'static str,
    },
    /// An initial placement names a class or node that does not exist.
    #[error("initial placement of class {class} on node {node} is out of range")]
    InitialOutOfRange {
        /// The class.
        class: usize,
        /// The node.
        node: usize,
    },
    /// A conflict names a class or topology that does not exist.
    #[error("conflict between classes {a} and {b} in topology {topology} is out of range")]
    ConflictOutOfRange {
        /// One class.
        a: usize,
        /// The other class.
        b: usize,
        /// The topology.
        topology: usize,
    },
    /// An inter-pod counter or rule names a class, node, topology or counter that does not
    /// exist (or a spread rule has `maxSkew` 0).
    #[error("inter-pod {what} {index} is out of range")]
    InterPod {
        /// "counter" or "rule".
        what: &'static str,
        /// Its index.
        index: usize,
    },
    /// A class requests a negative amount.
    #[error("class {class} requests {value} of resource {resource}; requests must not be negative")]
    NegativeRequest {
        /// The class.
        class: usize,
        /// The resource.
        resource: usize,
        /// The amount.
        value: i64,
    },
}

/// Recomputes a class's score on a node whose usage changed during the solve (for instance
/// kube-scheduler's resource scores). Called only for nodes that received a pod.
pub trait Rescore {
    /// Told about every placement as it is made, before any rescoring of that node (a caller
    /// whose scores depend on more than free capacity keeps its own node state here).
    fn placed(&mut self, class: usize, node: usize) {
        let _ = (class, node);
    }

    /// Told when the relocation step takes a pod of `class` off `node` (to place it on another
    /// node, announced next with [`Rescore::placed`]).
    fn removed(&mut self, class: usize, node: usize) {
        let _ = (class, node);
    }

    /// Told when a trade or a substitution (`greedy/trade.rs`, `greedy/substitute.rs`) takes a
    /// pod of `class` off `node` for good: it is unplaced again, and no placement of its class
    /// follows for it. The default treats it as [`Rescore::removed`].
    fn dropped(&mut self, class: usize, node: usize) {
        self.removed(class, node);
    }

    /// The score of `class` on `node`, whose free capacity per resource is now `free`.
    fn rescore(&mut self, class: usize, node: usize, free: &[i64]) -> i64;

    /// An upper bound of every score [`Rescore::rescore`] may return for `class` on `node`,
    /// whatever the node's usage: the greedy rescores a changed node only when this bound could
    /// beat the best node found so far (the default, `i64::MAX`, rescores every one).
    fn bound(&mut self, class: usize, node: usize) -> i64 {
        let _ = (class, node);
        i64::MAX
    }

    /// Class `class`'s score on every node, onto `out` (one per node): what
    /// [`Rescore::rescore`] returns on the nodes whose `version` is not 0 (changed during the
    /// solve; `free` is every node's free capacity, `width` entries a node), the matrix's score
    /// on the others. For a caller that computes a whole row faster than the changed nodes one
    /// by one (a kernel across the nodes): the greedy then scans the row instead of bounding
    /// the changed nodes. Returns false (the default) when it does not; `out` is then ignored.
    fn rescore_row(
        &mut self,
        class: usize,
        version: &[u64],
        free: &[i64],
        width: usize,
        out: &mut Vec<i64>,
    ) -> bool {
        let _ = (class, version, free, width, out);
        false
    }
}
