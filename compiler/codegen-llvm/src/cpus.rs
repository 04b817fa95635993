//! The x86 CPU names LLVM 19 knows (`llc-19 -mtriple=x86_64 -mcpu=help`),
//! split by whether they run 64-bit code. LLVM's C API can neither list nor
//! check them: a name it does not know is ignored with a warning on stderr,
//! and a 32-bit-only CPU aborts code generation ("64-bit code requested on a
//! subtarget that doesn't support it"). So `--cpu` is checked against these
//! lists; the test below compares them with llc's when llc-19 is installed.

/// CPUs afc generates code for.
pub const X86_64: &[&str] = &[
    "alderlake", "amdfam10", "arrowlake", "arrowlake-s", "arrowlake_s", "athlon-fx", "athlon64",
    "athlon64-sse3", "atom", "atom_sse4_2", "atom_sse4_2_movbe", "barcelona", "bdver1", "bdver2",
    "bdver3", "bdver4", "bonnell", "broadwell", "btver1", "btver2", "cannonlake",
    "cascadelake", "clearwaterforest", "cooperlake", "core-avx-i", "core-avx2", "core2", "core_2_duo_sse4_1",
    "core_2_duo_ssse3", "core_2nd_gen_avx", "core_3rd_gen_avx", "core_4th_gen_avx", "core_4th_gen_avx_tsx", "core_5th_gen_avx", "core_5th_gen_avx_tsx",
    "core_aes_pclmulqdq", "core_i7_sse4_2", "corei7", "corei7-avx", "emeraldrapids", "generic", "goldmont",
    "goldmont-plus", "goldmont_plus", "gracemont", "grandridge", "graniterapids", "graniterapids-d", "graniterapids_d",
    "haswell", "icelake-client", "icelake-server", "icelake_client", "icelake_server", "ivybridge", "k8",
    "k8-sse3", "knl", "knm", "lunarlake", "meteorlake", "mic_avx512", "nehalem",
    "nocona", "opteron", "opteron-sse3", "pantherlake", "penryn", "raptorlake", "rocketlake",
    "sandybridge", "sapphirerapids", "sierraforest", "silvermont", "skx", "skylake", "skylake-avx512",
    "skylake_avx512", "slm", "tigerlake", "tremont", "westmere", "x86-64", "x86-64-v2",
    "x86-64-v3", "x86-64-v4", "znver1", "znver2", "znver3", "znver4", "znver5",
];

/// CPUs LLVM knows that cannot run x86-64 code.
pub const X86_32_ONLY: &[&str] = &[
    "athlon", "athlon-4", "athlon-mp", "athlon-tbird", "athlon-xp", "c3", "c3-2",
    "geode", "i386", "i486", "i586", "i686", "k6", "k6-2",
    "k6-3", "lakemont", "pentium", "pentium-m", "pentium-mmx", "pentium2", "pentium3",
    "pentium3m", "pentium4", "pentium4m", "pentium_4", "pentium_4_sse3", "pentium_ii", "pentium_iii",
    "pentium_iii_no_xmm_regs", "pentium_m", "pentium_mmx", "pentium_pro", "pentiumpro", "prescott", "winchip-c6",
    "winchip2", "yonah",
];

#[cfg(test)]
mod tests {
    /// The lists are llc-19's CPU list, split by whether a 64-bit function
    /// compiles for the CPU.
    #[test]
    fn matches_llc() {
        let Ok(out) = std::process::Command::new("llc-19").args(["-mtriple=x86_64-unknown-linux-gnu", "-mcpu=help"]).output() else { return };
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        let listed: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Available CPUs"))
            .take_while(|l| !l.starts_with("Available features"))
            .filter(|l| l.contains("Select the"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let mut ours: Vec<&str> = super::X86_64.iter().chain(super::X86_32_ONLY).copied().collect();
        ours.sort();
        let mut theirs = listed.clone();
        theirs.sort();
        assert_eq!(ours, theirs);
    }
}
