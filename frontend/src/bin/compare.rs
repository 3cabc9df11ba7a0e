//! The comparison page's bundle (`/compare/{a}/{b}`): behaviour for the comparison the server
//! drew, no view tree.

fn main() {
    h123_frontend::compare_page::start();
}
