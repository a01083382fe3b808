fn main() {
    // The migrations are embedded with include_str!, so editing one must rebuild the crate.
    println!("cargo:rerun-if-changed=migrations");
}
