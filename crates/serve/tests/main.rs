//! `decide serve`'s integration tests, one binary: the API and the page through the router in
//! process (`api.rs`), and the load test on the loopback address (`load.rs`).

mod api;
mod load;
