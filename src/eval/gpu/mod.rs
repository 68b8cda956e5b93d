//! GPU matrix evaluation: the WGSL kernels of `shaders/` run with wgpu.
//!
//! Input: [`crate::eval::Prepared`]. Output: a [`crate::eval::Matrix`] equal bit for bit to
//! [`crate::eval::cpu::evaluate`]'s. No upstream counterpart.

pub mod kernels;
pub mod types;

#[cfg(test)]
mod tests;
