//! The home page's bundle (`/`), which also says "not found" for paths no bundle knows: behaviour
//! for the forms the server drew, no view tree.

fn main() {
    h123_frontend::home_page::start();
}
