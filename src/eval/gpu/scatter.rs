//! Read-back planes into the matrix: the words of a mapped staging buffer, one chunk's tiles,
//! copied into the row-major `C × N` planes of [`RawResults`].
//!
//! Input: the mapped bytes of one plane buffer ([`Buf`]) of one class chunk and where that chunk
//! sits ([`Scatter`]). Output: the chunk's rows of the matching [`RawResults`] plane. No upstream
//! counterpart.

use rayon::prelude::*;

use super::kernels::Buf;
use crate::eval::{NUM_SCORE_PLANES, RawResults};

/// Little-endian `u32` words of mapped bytes (no alignment assumption).
pub(super) fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect()
}

/// Where one chunk's planes go in the matrix.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scatter {
    pub(super) nn: usize,
    pub(super) tile_stride: u32,
    pub(super) tiles: u32,
    pub(super) chunk_classes: u32,
    pub(super) class_start: u32,
    pub(super) class_len: u32,
}

/// Copies one read-back plane of a chunk into `results`.
pub(super) fn scatter(results: &mut RawResults, b: Buf, words: &[u32], s: Scatter) {
    let (cs, cl, cap) = (s.class_start as usize, s.class_len as usize, s.chunk_classes as usize);
    let per_class = |dst: &mut [i32], plane: usize| {
        for c in 0..cl {
            if let (Some(d), Some(&w)) = (dst.get_mut(cs + c), words.get(plane * cap + c)) {
                *d = w as i32;
            }
        }
    };
    let signed = |w: u32| w as i32;
    match b {
        Buf::RowMax => {
            for (k, dst) in results.row_max.iter_mut().enumerate() {
                per_class(dst, k);
            }
        }
        Buf::RowMin => {
            for (k, dst) in results.row_min.iter_mut().enumerate() {
                per_class(dst, k);
            }
        }
        Buf::BestTotal => per_class(&mut results.best_total, 0),
        Buf::FeasibleCount => {
            for c in 0..cl {
                if let Some(&w) = words.get(c) {
                    results.feasible_count[cs + c] = w;
                }
            }
        }
        Buf::CellFilter => put_cells(&mut results.filter, words, s, (1, 0), |w| w),
        Buf::FitInsufficient => put_cells(&mut results.fit_insufficient, words, s, (1, 0), |w| w),
        Buf::Total => put_cells(&mut results.total, words, s, (1, 0), signed),
        // The score planes are independent destinations: one thread each.
        Buf::Raw => results.raw.par_iter_mut().enumerate().for_each(|(k, dst)| {
            put_cells(dst, words, s, (NUM_SCORE_PLANES, k), signed);
        }),
        Buf::Norm => results.normalized.par_iter_mut().enumerate().for_each(|(k, dst)| {
            put_cells(dst, words, s, (NUM_SCORE_PLANES, k), signed);
        }),
        _ => {}
    }
}

/// Copies plane `plane.1` of a chunk's cell buffer (per tile, `plane.0` planes of
/// `chunk_classes × tile_stride` cells one after the other) into the row-major `C × N` matrix
/// plane `dst`.
fn put_cells<T>(
    dst: &mut [T],
    words: &[u32],
    s: Scatter,
    plane: (usize, usize),
    conv: impl Fn(u32) -> T,
) {
    let stride = s.tile_stride as usize;
    let (cs, cl) = (s.class_start as usize, s.class_len as usize);
    let region = s.chunk_classes as usize * stride;
    let (planes, k) = plane;
    for t in 0..s.tiles as usize {
        let tile_start = t * stride;
        let tile_len = stride.min(s.nn.saturating_sub(tile_start));
        let base = t * planes * region + k * region;
        for c in 0..cl {
            let src = words.get(base + c * stride..base + c * stride + tile_len);
            let at = (cs + c) * s.nn + tile_start;
            if let (Some(src), Some(dst)) = (src, dst.get_mut(at..at + tile_len)) {
                for (d, &w) in dst.iter_mut().zip(src) {
                    *d = conv(w);
                }
            }
        }
    }
}
