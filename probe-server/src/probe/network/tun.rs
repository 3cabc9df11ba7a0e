//! A TUN device: a network interface whose IPv4 packets this process reads
//! and writes itself (Linux, `CAP_NET_ADMIN`). The device lives as long as
//! its file descriptor and vanishes with it.
//!
//! This is the project's second `unsafe` code after `tcp_info`: the
//! `ioctl`s that create and configure the interface, and the raw reads and
//! writes on its descriptor.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;

/// An up TUN interface with an IPv4 address, read and written packet by
/// packet (no packet information header).
#[derive(Debug)]
pub struct Tun {
    fd: AsyncFd<OwnedFd>,
    name: String,
}

impl Tun {
    /// Creates an interface named `h123t<N>` with `address/prefix`, and
    /// brings it up: packets the kernel routes to that subnet come out of
    /// [`Tun::read`], and what [`Tun::write`] hands in arrives as if the
    /// interface had received it. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// Without `/dev/net/tun` or the right to configure interfaces.
    pub fn create(address: Ipv4Addr, prefix: u8) -> io::Result<Tun> {
        let path = c"/dev/net/tun";
        // SAFETY: a valid C string; the result is checked.
        let raw = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor just opened and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut request = request(c"h123t%d");
        request.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads and fills an `ifreq` we own.
        check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut request) })?;
        // SAFETY: the kernel wrote a NUL-terminated name into the array.
        let name = unsafe { CStr::from_ptr(request.ifr_name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        configure(&request, address, prefix)?;
        // SAFETY: an `OwnedFd` keeps its descriptor open and the same for
        // as long as it lives.
        let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(Tun { fd, name })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads the next packet into `buf`; its length.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            let read = ready.try_io(|fd| {
                // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
                let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            if let Ok(result) = read {
                return result;
            }
        }
    }

    /// Hands `packet` to the kernel as received on the interface. A full
    /// queue drops it, as a real interface would.
    pub fn write(&self, packet: &[u8]) -> io::Result<()> {
        // SAFETY: `packet` is valid for `packet.len()` bytes of reads.
        let n = unsafe {
            libc::write(
                self.fd.get_ref().as_raw_fd(),
                packet.as_ptr().cast(),
                packet.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// An `ifreq` for the interface `name`, everything else zero.
fn request(name: &CStr) -> libc::ifreq {
    // SAFETY: `ifreq` is plain data, valid when zeroed.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in request.ifr_name.iter_mut().zip(name.to_bytes()) {
        *to = *from as libc::c_char;
    }
    request
}

/// Gives the interface of `named` its address and netmask and brings it up.
fn configure(named: &libc::ifreq, address: Ipv4Addr, prefix: u8) -> io::Result<()> {
    // SAFETY: a plain socket call; the result is checked.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a descriptor just opened and owned by nobody else.
    let control = unsafe { OwnedFd::from_raw_fd(raw) };
    let mask = Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0));
    for (ioctl, value) in [(libc::SIOCSIFADDR, address), (libc::SIOCSIFNETMASK, mask)] {
        let mut request = *named;
        request.ifr_ifru.ifru_addr = sockaddr(value);
        // SAFETY: the ioctl reads an `ifreq` we own.
        check(unsafe { libc::ioctl(control.as_raw_fd(), ioctl, &mut request) })?;
    }
    let mut request = *named;
    // SAFETY: the ioctls read and fill an `ifreq` we own; `ifru_flags` is the
    // union field SIOCGIFFLAGS wrote.
    unsafe {
        check(libc::ioctl(
            control.as_raw_fd(),
            libc::SIOCGIFFLAGS,
            &mut request,
        ))?;
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        check(libc::ioctl(
            control.as_raw_fd(),
            libc::SIOCSIFFLAGS,
            &mut request,
        ))?;
    }
    Ok(())
}

/// `address` as the generic socket address an `ifreq` carries.
fn sockaddr(address: Ipv4Addr) -> libc::sockaddr {
    let inet = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(address).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `sockaddr_in` and `sockaddr` have the same size, and the kernel
    // reads the former through the latter, as C code does.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(inet) }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
