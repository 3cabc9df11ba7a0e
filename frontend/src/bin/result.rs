//! The result page's bundle (`/r/{id}`): behaviour for the result the server drew, no view tree.

fn main() {
    h123_frontend::result_page::start();
}
