pub mod preemption;
