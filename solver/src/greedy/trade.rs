//! Trading one placed pod for several: after relocation, a pod this solve placed gives its node
//! to two or more unplaced pods of its priority tier that fit there in its stead and together
//! request at least as much of every resource.
//!
//! Input: the solver's state after the greedy pass and relocation. Output: the same state with
//! some placements traded; per tier more pods placed and no less of any resource requested.
//!
//! Why: the greedy (like kube-scheduler's queue) may place a large pod on the last node with
//! room for it where the same room, left to later pods, would have held several smaller ones.
//! kube-scheduler skips such a pod when it finds no room at its turn; the batch solve, whose
//! earlier choices differ, may have found room. A trade keeps the tier's requested resources
//! (the default objective is indifferent up to rounding) and places more pods.
//!
//! Rules of a trade, each keeping what the rest of the solver relies on:
//! - The pod given up is of a class that relocation may move ([`State::movable`]: no hard
//!   inter-pod rule, no conflict, counted by no hard rule), so no hard decision depended on it;
//!   its class keeps at least one pod placed by this solve (no workload is starved for the
//!   trade); and leaving neither lowers the minimum of a spread counter it counts in nor takes
//!   a total that could be spread evenly to one that cannot (its workload's spread does not get
//!   worse, now or after evening out).
//! - The pods taken are the tier's unplaced pods in the solve's class order, each checked as
//!   the greedy checks a pod ([`State::can_take`]), and none may raise the maximum of a
//!   spread counter it counts in.
//! - The trade stands only when at least two pods were taken and their requests add up to at
//!   least the given-up pod's in every resource; otherwise it is undone.
//!
//! Largest pods are offered first; a node and class are tried once per change of the node, and
//! the whole pass spends at most [`TRADE_WORK`] checks.
//!
//! The pass runs twice ([`Taking`]). The first, after relocation, takes pods in the solve's
//! class order. The second runs after evening out and substitution have spread the workloads,
//! and is fairer and stricter:
//! - the pods taken are smaller than the pod given up (no more of any resource, and not the
//!   same requests), each from the waiting class with the smallest share of its pods placed
//!   (so the room goes round the workloads left short, not to the first in line);
//! - the pod given up must keep the best skew its workload could still reach over the pods
//!   bound before the solve ([`crate::topology::TopologyState::removal_keeps_even_skew`]): a
//!   Deployment with 5 bound replicas in one of three zones keeps the pod that would make its
//!   placed ones 5 / 3 / 3 rather than 5 / 3 / 2.
//!
//! On an oversubscribed cluster of Deployments whose CPU the queue fills either way, the first
//! pass alone can leave fewer pods than kube-scheduler's queue (2-CPU replicas where several
//! small ones fit: `kplace gen --workload deployments --nodes 100 --pods 2000 --init-pods 300
//! --seed 23`, 673 pods against baseline's 680); the second closes it (702) without leaving a
//! workload more skewed.
//!
//! Upstream counterpart: none (kube-scheduler never revisits a placement; its preemption only
//! evicts lower priorities).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::{Placed, State, fits};
use crate::objective::{capacity, dominant_share};

/// The checks (one pod against the node it might take) one pass may spend.
const TRADE_WORK: u64 = 1 << 22;

/// How a pass of trading takes pods and gives them up (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Taking {
    /// Unplaced pods in the solve's class order; the pod given up keeps its workload's spread
    /// ([`crate::topology::TopologyState::removal_keeps_spread`]).
    InOrder,
    /// Only pods smaller than the one given up, the worst-served class first; the pod given up
    /// keeps the best skew reachable over the bound pods.
    SmallerWorstServed,
}

impl State<'_, '_> {
    /// Trades placed pods for several unplaced ones where the rules allow (see the module doc).
    /// `order` is the solve's class order (the order the taken pods are tried in with
    /// [`Taking::InOrder`]). Returns the pods won per priority (taken less given up; tiers
    /// without a trade are absent).
    pub(super) fn trade_for_more(&mut self, order: &[usize], taking: Taking) -> BTreeMap<i32, u32> {
        let problem = self.problem;
        let classes = &problem.classes;
        let mut waiting: Vec<Vec<usize>> = Vec::new();
        let mut tiers: Vec<i32> = Vec::new();
        for &u in order {
            if self.unplaced[u] == 0 || self.limit(u) == 0 {
                continue;
            }
            let prio = classes[u].priority;
            match tiers.iter().position(|&t| t == prio) {
                Some(t) => waiting[t].push(u),
                None => {
                    tiers.push(prio);
                    waiting.push(vec![u]);
                }
            }
        }
        let mut won: BTreeMap<i32, u32> = BTreeMap::new();
        if waiting.is_empty() || self.placements.is_empty() {
            return won;
        }
        let cap = capacity(problem);
        let share: Vec<u64> = classes.iter().map(|c| dominant_share(&c.requests, &cap)).collect();
        let movable: Vec<bool> = (0..classes.len()).map(|c| self.movable(c)).collect();
        let mut offers: Vec<usize> = (0..self.placements.len())
            .filter(|&i| {
                let c = self.placements[i].class;
                movable[c] && tiers.contains(&classes[c].priority)
            })
            .collect();
        offers.sort_by_key(|&i| (Reverse(share[self.placements[i].class]), Reverse(i)));
        let mut tried: BTreeSet<(usize, usize, u64)> = BTreeSet::new();
        // Placements given up, removed at the end so that the offers' indices hold meanwhile.
        let mut given_up = vec![false; self.placements.len()];
        let mut work = TRADE_WORK;
        // Scratch of `trade`: the classes that may still take a pod on the node tried.
        let mut open: Vec<usize> = Vec::new();
        for i in offers {
            if work == 0 {
                break;
            }
            let Placed { class: c, node } = self.placements[i];
            let Some(t) = tiers.iter().position(|&t| t == classes[c].priority) else { continue };
            let placed_here = classes[c].count.saturating_sub(self.unplaced[c]);
            if placed_here < 2 || !tried.insert((c, node, self.version[node])) {
                continue;
            }
            work -= 1;
            let keeps = |k: usize| match taking {
                Taking::InOrder => self.topo.removal_keeps_spread(k, node),
                Taking::SmallerWorstServed => self.topo.removal_keeps_even_skew(k, node),
            };
            if !self.topo.counters_of(c).iter().all(|&k| keeps(k)) {
                continue;
            }
            if let Some(taken) = self.trade(i, &waiting[t], taking, &mut open, &mut work) {
                given_up[i] = true;
                *won.entry(classes[c].priority).or_default() += taken.saturating_sub(1);
            } else {
                // An undone trial leaves the node as it was but bumps its version: the same
                // class there would fail the same way.
                tried.insert((c, node, self.version[node]));
            }
        }
        self.remove_given_up(&given_up);
        won
    }

    /// Removes the placements marked in `given_up` (by index; placements past its end stay),
    /// keeping the others in order. Trades and substitutions mark them as they go, so that the
    /// indices they hold stay valid until the pass ends.
    pub(super) fn remove_given_up(&mut self, given_up: &[bool]) {
        if given_up.contains(&true) {
            let mut i = 0;
            self.placements.retain(|_| {
                i += 1;
                !given_up.get(i - 1).copied().unwrap_or(false)
            });
        }
    }

    /// Tries one trade: placement `i` gives its node to pods of the classes `waiting` (see the
    /// module doc), taken as `taking` says. The trial runs on the solver's state alone; the
    /// callback hears only a trade that stands ([`super::Rescore::dropped`], then
    /// [`super::Rescore::placed`] per pod taken). Returns the pods taken when it stands; the
    /// caller then removes placement `i` (the pods taken come last in the decision order, after
    /// every pod their hard rules read).
    fn trade(
        &mut self,
        i: usize,
        waiting: &[usize],
        taking: Taking,
        open: &mut Vec<usize>,
        work: &mut u64,
    ) -> Option<u32> {
        let Placed { class: c, node } = self.placements[i];
        let callback = self.rescore.take();
        self.take_off(c, node);
        let before = self.placements.len();
        let mut sum = vec![0i64; self.problem.resources];
        let classes = &self.problem.classes;
        let smaller = |u: usize| {
            let (a, b) = (&classes[u].requests, &classes[c].requests);
            a != b && fits(a, b)
        };
        // The classes that may still take a pod here, in class order.
        open.clear();
        open.extend(
            waiting
                .iter()
                .copied()
                .filter(|&u| u != c && (taking == Taking::InOrder || smaller(u))),
        );
        while *work > 0 && !open.is_empty() {
            let at = match taking {
                Taking::InOrder => 0,
                Taking::SmallerWorstServed => self.worst_served(open),
            };
            let u = open[at];
            if self.unplaced[u] == 0 {
                open.remove(at);
                continue;
            }
            *work -= 1;
            let spread_kept =
                self.topo.counters_of(u).iter().all(|&k| self.topo.addition_keeps_maximum(k, node));
            if !spread_kept || !self.can_take(u, node) {
                open.remove(at);
                continue;
            }
            self.place(u, node);
            for (s, &r) in sum.iter_mut().zip(&self.problem.classes[u].requests) {
                *s = s.saturating_add(r);
            }
        }
        let taken = self.placements.len() - before;
        let stands = taken >= 2 && sum.iter().zip(self.req(c)).all(|(&s, &r)| s >= r);
        if stands {
            self.rescore = callback;
            if let Some(r) = self.rescore.as_mut() {
                r.dropped(c, node);
                for p in &self.placements[before..] {
                    r.placed(p.class, node);
                }
            }
            return Some(u32::try_from(taken).unwrap_or(u32::MAX));
        }
        while self.placements.len() > before {
            if let Some(Placed { class: u, .. }) = self.placements.pop() {
                self.take_off(u, node);
            }
        }
        self.put_back(c, node);
        self.rescore = callback;
        None
    }

    /// The index in `open` of the class with the smallest share of its pods placed by this
    /// solve (the first of equals).
    fn worst_served(&self, open: &[usize]) -> usize {
        let classes = &self.problem.classes;
        let placed = |u: usize| u64::from(classes[u].count.saturating_sub(self.unplaced[u]));
        let mut best = 0;
        for (j, &u) in open.iter().enumerate().skip(1) {
            let w = open[best];
            if placed(u) * u64::from(classes[w].count) < placed(w) * u64::from(classes[u].count) {
                best = j;
            }
        }
        best
    }

    /// Takes one pod of class `c` off `node` (usage and counts; the caller updates the
    /// placements) and counts it unplaced again.
    pub(super) fn take_off(&mut self, c: usize, node: usize) {
        self.adjust(c, node, false);
        self.unplaced[c] += 1;
    }

    /// Undoes [`State::take_off`]: the pod of class `c` is on `node` again (usage and counts;
    /// the caller's placement of it stands).
    pub(super) fn put_back(&mut self, c: usize, node: usize) {
        self.adjust(c, node, true);
        self.unplaced[c] = self.unplaced[c].saturating_sub(1);
    }
}
