//! The bench page's bundle (`/b/{id}`): behaviour for the bench the server drew, no view tree.

fn main() {
    h123_frontend::bench_page::start();
}
