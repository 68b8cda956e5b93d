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
//! Upstream counterpart: none (kube-scheduler never revisits a placement; its preemption only
//! evicts lower priorities).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::{Placed, State};
use crate::objective::{capacity, dominant_share};

/// The checks (one pod against the node it might take) one pass may spend.
const TRADE_WORK: u64 = 1 << 22;

impl State<'_, '_> {
    /// Trades placed pods for several unplaced ones where the rules allow (see the module doc).
    /// `order` is the solve's class order (the order the taken pods are tried in). Returns the
    /// pods won per priority (taken less given up; tiers without a trade are absent).
    pub(super) fn trade_for_more(&mut self, order: &[usize]) -> BTreeMap<i32, u32> {
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
            if self.topo.counters_of(c).iter().any(|&k| !self.topo.removal_keeps_spread(k, node)) {
                continue;
            }
            if let Some(taken) = self.trade(i, &waiting[t], &mut work) {
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
    /// module doc). The trial runs on the solver's state alone; the callback hears only a
    /// trade that stands ([`super::Rescore::dropped`], then [`super::Rescore::placed`] per pod
    /// taken). Returns the pods taken when it stands; the caller then removes placement `i`
    /// (the pods taken come last in the decision order, after every pod their hard rules read).
    fn trade(&mut self, i: usize, waiting: &[usize], work: &mut u64) -> Option<u32> {
        let Placed { class: c, node } = self.placements[i];
        let callback = self.rescore.take();
        self.take_off(c, node);
        let before = self.placements.len();
        let mut sum = vec![0i64; self.problem.resources];
        for &u in waiting {
            if u == c {
                continue;
            }
            while self.unplaced[u] > 0 && *work > 0 {
                *work -= 1;
                let spread_kept = self
                    .topo
                    .counters_of(u)
                    .iter()
                    .all(|&k| self.topo.addition_keeps_maximum(k, node));
                if !spread_kept || !self.can_take(u, node) {
                    break;
                }
                self.place(u, node);
                for (s, &r) in sum.iter_mut().zip(&self.problem.classes[u].requests) {
                    *s = s.saturating_add(r);
                }
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
