//! Joins the relocatable objects of a split module's parts (`units`) into
//! one, as `ld -r` would: sections of one name are concatenated, each
//! part's symbols and relocations moved by where its piece of a section
//! went, a part's undefined reference to a function another part defines
//! bound to that definition, and the functions the split made global made
//! local again. Only 64-bit ELF with explicit addends (x86-64's RELA) is
//! joined; anything else is an error, and the module is compiled whole.

use std::collections::HashMap;

use object::elf;
use object::read::elf::{ElfFile64, SectionHeader as _};
use object::read::{Object as _, ObjectSection as _, ObjectSymbol as _};
use object::Endianness;
use object::write::{Object, Relocation, SectionId, Symbol, SymbolId, SymbolSection};
use object::{BinaryFormat, RelocationFlags, RelocationTarget, SectionFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope};

/// Section types a part's object holds that are not copied: the symbol
/// and relocation tables (made anew), and LLVM's address-significance
/// table, a list of symbol indices — an optional hint, which left out
/// means every symbol is significant.
const REMADE: [u32; 7] = [elf::SHT_NULL, elf::SHT_SYMTAB, elf::SHT_STRTAB, elf::SHT_RELA, elf::SHT_REL, elf::SHT_SYMTAB_SHNDX, SHT_LLVM_ADDRSIG];

/// LLVM's `.llvm_addrsig` section type.
const SHT_LLVM_ADDRSIG: u32 = 0x6fff_4c03;

/// One object of `parts`, in their order; `local`: symbols to make local.
pub fn join(parts: &[Vec<u8>], local: &[String]) -> Result<Vec<u8>, String> {
    let files = parts.iter().map(|b| ElfFile64::<Endianness>::parse(b.as_slice()).map_err(|e| format!("a part's object is not 64-bit ELF: {}", e))).collect::<Result<Vec<_>, _>>()?;
    let first = files.first().ok_or("no parts to join")?;
    if first.architecture() != object::Architecture::X86_64 {
        return Err(format!("parts of {:?} objects are not joined", first.architecture()));
    }
    let local: std::collections::HashSet<&[u8]> = local.iter().map(|l| l.as_bytes()).collect();
    let mut out = Object::new(BinaryFormat::Elf, first.architecture(), first.endianness());
    out.flags = first.flags();
    let mut sections: HashMap<Vec<u8>, (SectionId, u32, u64)> = HashMap::new();
    // Per part: its section index → (the joined section, its piece's offset).
    let mut placed: Vec<HashMap<usize, (SectionId, u64)>> = vec![];
    for file in &files {
        let endian = file.endian();
        let mut here = HashMap::new();
        for s in file.sections() {
            let object::SectionFlags::Elf { sh_flags } = s.flags() else { return Err("a section without ELF flags".into()) };
            let header = s.elf_section_header();
            let sh_type = header.sh_type(endian);
            if sh_type == elf::SHT_GROUP {
                return Err("a part has a section group".into());
            }
            if REMADE.contains(&sh_type) {
                continue;
            }
            if sh_flags & u64::from(elf::SHF_GROUP | elf::SHF_LINK_ORDER | elf::SHF_TLS) != 0 {
                return Err(format!("section {} has flags that are not joined ({:#x})", s.name().unwrap_or("?"), sh_flags));
            }
            let name = s.name_bytes().map_err(|e| e.to_string())?.to_vec();
            let id = match sections.get(&name) {
                Some(&(id, t, f)) if t == sh_type && f == sh_flags => id,
                Some(_) => return Err(format!("section {} differs between parts", String::from_utf8_lossy(&name))),
                None => {
                    // The writer sets no entry size but a string's 1: a
                    // merged section of constants becomes a plain one.
                    let strings = sh_flags & u64::from(elf::SHF_STRINGS) != 0;
                    let (kind, flags) = if sh_flags & u64::from(elf::SHF_MERGE) != 0 && !strings {
                        (SectionKind::Elf(sh_type), sh_flags & !u64::from(elf::SHF_MERGE))
                    } else if strings {
                        if header.sh_entsize(endian) != 1 {
                            return Err(format!("string section {} of wide characters", String::from_utf8_lossy(&name)));
                        }
                        (if sh_flags & u64::from(elf::SHF_ALLOC) != 0 { SectionKind::ReadOnlyString } else { SectionKind::OtherString }, sh_flags)
                    } else if sh_type == elf::SHT_NOBITS {
                        (SectionKind::UninitializedData, sh_flags)
                    } else {
                        (SectionKind::Elf(sh_type), sh_flags)
                    };
                    let id = out.add_section(vec![], name.clone(), kind);
                    out.section_mut(id).flags = SectionFlags::Elf { sh_flags: flags };
                    sections.insert(name, (id, sh_type, sh_flags));
                    id
                }
            };
            let align = s.align().max(1);
            let at = if sh_type == elf::SHT_NOBITS {
                out.append_section_bss(id, s.size(), align)
            } else {
                out.append_section_data(id, s.data().map_err(|e| e.to_string())?, align)
            };
            here.insert(s.index().0, (id, at));
        }
        placed.push(here);
    }

    // Defined symbols first, so that an undefined one can find its
    // definition in another part.
    let mut defined: HashMap<Vec<u8>, SymbolId> = HashMap::new();
    let mut symbols: Vec<HashMap<usize, (SymbolId, i64)>> = vec![HashMap::new(); files.len()];
    let mut file_symbol = false;
    for (p, file) in files.iter().enumerate() {
        for sym in file.symbols().filter(|s| s.index().0 != 0) {
            let name = sym.name_bytes().map_err(|e| e.to_string())?.to_vec();
            match (sym.kind(), sym.section()) {
                (SymbolKind::File, _) => {
                    if !std::mem::replace(&mut file_symbol, true) {
                        out.add_symbol(Symbol { name, value: 0, size: 0, kind: SymbolKind::File, scope: SymbolScope::Compilation, weak: false, section: SymbolSection::None, flags: SymbolFlags::None });
                    }
                }
                (SymbolKind::Section, object::SymbolSection::Section(i)) => {
                    // (A relocation against one of a section not copied
                    // finds no symbol: an error below.)
                    if let Some(&(id, at)) = placed[p].get(&i.0) {
                        symbols[p].insert(sym.index().0, (out.section_symbol(id), at as i64));
                    }
                }
                (_, object::SymbolSection::Section(i)) => {
                    let &(id, at) = placed[p].get(&i.0).ok_or_else(|| format!("symbol {} in a section not copied", String::from_utf8_lossy(&name)))?;
                    let object::SymbolFlags::Elf { st_info, st_other } = sym.flags() else { return Err("a symbol without ELF flags".into()) };
                    let make_local = local.contains(name.as_slice());
                    let (scope, flags) = if make_local {
                        (SymbolScope::Compilation, SymbolFlags::Elf { st_info: (elf::STB_LOCAL << 4) | (st_info & 0xf), st_other: elf::STV_DEFAULT })
                    } else {
                        (sym.scope(), SymbolFlags::Elf { st_info, st_other })
                    };
                    let id = out.add_symbol(Symbol { name: name.clone(), value: sym.address() + at, size: sym.size(), kind: sym.kind(), scope, weak: sym.is_weak(), section: SymbolSection::Section(id), flags });
                    if (sym.is_global() || make_local) && defined.insert(name.clone(), id).is_some() {
                        return Err(format!("symbol {} is defined in two parts", String::from_utf8_lossy(&name)));
                    }
                    symbols[p].insert(sym.index().0, (id, 0));
                }
                (_, object::SymbolSection::Undefined) => {}
                (kind, section) => return Err(format!("symbol {} ({:?} in {:?}) is not joined", String::from_utf8_lossy(&name), kind, section)),
            }
        }
    }
    let mut undefined: HashMap<Vec<u8>, SymbolId> = HashMap::new();
    for (p, file) in files.iter().enumerate() {
        for sym in file.symbols().filter(|s| s.index().0 != 0 && s.is_undefined() && s.kind() != SymbolKind::File) {
            let name = sym.name_bytes().map_err(|e| e.to_string())?.to_vec();
            let id = match defined.get(&name) {
                Some(&id) => id,
                None => *undefined.entry(name.clone()).or_insert_with(|| {
                    let flags = match sym.flags() {
                        object::SymbolFlags::Elf { st_info, st_other } => SymbolFlags::Elf { st_info, st_other },
                        _ => SymbolFlags::None,
                    };
                    out.add_symbol(Symbol { name, value: 0, size: 0, kind: sym.kind(), scope: SymbolScope::Unknown, weak: sym.is_weak(), section: SymbolSection::Undefined, flags })
                }),
            };
            symbols[p].insert(sym.index().0, (id, 0));
        }
    }

    for (p, file) in files.iter().enumerate() {
        for s in file.sections() {
            let Some(&(id, at)) = placed[p].get(&s.index().0) else { continue };
            for (offset, r) in s.relocations() {
                if r.has_implicit_addend() {
                    return Err("a relocation with an implicit addend".into());
                }
                let RelocationFlags::Elf { r_type } = r.flags() else { return Err("a relocation without ELF flags".into()) };
                let (symbol, moved) = match r.target() {
                    RelocationTarget::Symbol(i) => *symbols[p].get(&i.0).ok_or("a relocation against a symbol not copied")?,
                    RelocationTarget::Section(i) => {
                        let &(sid, sat) = placed[p].get(&i.0).ok_or("a relocation against a section not copied")?;
                        (out.section_symbol(sid), sat as i64)
                    }
                    RelocationTarget::Absolute => return Err("an absolute relocation".into()),
                    _ => return Err("a relocation of an unknown target".into()),
                };
                out.add_relocation(id, Relocation { offset: offset + at, symbol, addend: r.addend() + moved, flags: RelocationFlags::Elf { r_type } }).map_err(|e| e.to_string())?;
            }
        }
    }
    out.write().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part: 16 bytes of text defining `name` (global, hidden when
    /// `hidden`), 8 bytes of constants, and its relocations: (offset in
    /// the text, target symbol — `None` for the constants' section — and
    /// addend).
    fn part(name: &str, hidden: bool, relocs: &[(u64, Option<&str>, i64)]) -> Vec<u8> {
        let mut o = Object::new(BinaryFormat::Elf, object::Architecture::X86_64, Endianness::Little);
        let text = o.add_section(vec![], b".text".to_vec(), SectionKind::Text);
        o.append_section_data(text, &[0x90; 16], 16);
        let rodata = o.add_section(vec![], b".rodata".to_vec(), SectionKind::ReadOnlyData);
        o.append_section_data(rodata, &[7; 8], 8);
        let scope = if hidden { SymbolScope::Linkage } else { SymbolScope::Dynamic };
        o.add_symbol(Symbol { name: name.into(), value: 0, size: 16, kind: SymbolKind::Text, scope, weak: false, section: SymbolSection::Section(text), flags: SymbolFlags::None });
        for &(offset, target, addend) in relocs {
            let symbol = match target {
                Some(t) => o.symbol_id(t.as_bytes()).unwrap_or_else(|| o.add_symbol(Symbol { name: t.into(), value: 0, size: 0, kind: SymbolKind::Text, scope: SymbolScope::Dynamic, weak: false, section: SymbolSection::Undefined, flags: SymbolFlags::None })),
                None => o.section_symbol(rodata),
            };
            o.add_relocation(text, Relocation { offset, symbol, addend, flags: RelocationFlags::Elf { r_type: elf::R_X86_64_PC32 } }).unwrap();
        }
        o.write().unwrap()
    }

    #[test]
    fn parts_join_with_their_symbols_and_relocations_moved() {
        let glue = part("glue", false, &[(4, Some("chunk"), -4), (8, None, 0)]);
        let chunk = part("chunk", true, &[(2, None, 4), (10, Some("memcpy"), -4)]);
        let joined = join(&[glue, chunk], &["chunk".to_string()]).unwrap();
        let f = object::File::parse(joined.as_slice()).unwrap();
        let text = f.section_by_name(".text").unwrap();
        assert_eq!(text.size(), 32);
        assert_eq!(f.section_by_name(".rodata").unwrap().size(), 16);
        let sym = |n: &str| f.symbols().find(|s| s.name() == Ok(n)).unwrap();
        assert!(sym("glue").is_global());
        // The split made `chunk` global; joined, it is local again, after
        // the first part's text.
        assert!(sym("chunk").is_local() && sym("chunk").address() == 16);
        assert!(sym("memcpy").is_undefined());
        let relocs: Vec<(u64, String, i64)> = text
            .relocations()
            .map(|(at, r)| {
                let target = match r.target() {
                    RelocationTarget::Symbol(i) => {
                        let s = f.symbol_by_index(i).unwrap();
                        if s.kind() == SymbolKind::Section { f.section_by_index(s.section_index().unwrap()).unwrap().name().unwrap().to_string() } else { s.name().unwrap().to_string() }
                    }
                    _ => "?".into(),
                };
                (at, target, r.addend())
            })
            .collect();
        // The second part's reference to its constants moves with their
        // piece (8 bytes on), its own offsets with its text (16 on); the
        // first part's undefined `chunk` is the second's definition.
        assert_eq!(relocs, vec![(4, "chunk".into(), -4), (8, ".rodata".into(), 0), (18, ".rodata".into(), 12), (26, "memcpy".into(), -4)]);
    }

    #[test]
    fn a_symbol_defined_in_two_parts_is_an_error() {
        let a = part("f", false, &[]);
        let b = part("f", false, &[]);
        assert!(join(&[a, b], &[]).unwrap_err().contains("defined in two parts"));
    }
}
