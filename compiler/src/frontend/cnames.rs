//! The C names an exported function may not take: its name becomes a
//! global symbol and a declaration in the generated header, so a keyword
//! gives a header that does not compile, a runtime name (`afc_free`) clashes
//! with afc.h, and a C library name (`malloc`, `exp`) replaces the library's
//! function for the whole program, the compiled code's own calls included.

/// Keywords of C99, C11, C23 and C++17, and C++'s alternative tokens.
pub const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
    "_Complex", "_Imaginary", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
    "_Thread_local", "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
    "thread_local", "true", "typeof", "typeof_unqual", "asm", "catch", "char8_t", "char16_t", "char32_t", "class",
    "concept", "const_cast", "consteval", "constinit", "co_await", "co_return", "co_yield", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "operator",
    "private", "protected", "public", "reinterpret_cast", "requires", "static_cast", "template", "this", "throw",
    "try", "typeid", "typename", "using", "virtual", "wchar_t", "and", "and_eq", "bitand", "bitor", "compl",
    "not", "not_eq", "or", "or_eq", "xor", "xor_eq",
];

/// Functions of the C standard library and of POSIX that a program linking
/// afc's objects (and afc's compiled code: the math functions, memory and
/// threads) is likely to use, and `main`.
pub const C_LIBRARY: &[&str] = &[
    "main",
    // stdlib.h
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "abort", "exit", "_Exit",
    "quick_exit", "atexit", "at_quick_exit", "getenv", "setenv", "unsetenv", "system", "atoi", "atol", "atoll",
    "atof", "strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "strtold", "rand", "srand", "qsort",
    "bsearch", "abs", "labs", "llabs", "div", "ldiv", "lldiv", "mblen", "mbtowc", "wctomb", "mbstowcs", "wcstombs",
    // string.h
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strcpy", "strncpy", "strcat", "strncat", "strcmp",
    "strncmp", "strcoll", "strxfrm", "strchr", "strrchr", "strspn", "strcspn", "strpbrk", "strstr", "strtok",
    "strlen", "strerror", "strdup", "strndup",
    // stdio.h
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf", "vsnprintf", "scanf", "fscanf",
    "sscanf", "fopen", "freopen", "fclose", "fflush", "fread", "fwrite", "fgetc", "fgets", "fputc", "fputs",
    "getc", "getchar", "putc", "putchar", "puts", "ungetc", "fseek", "ftell", "rewind", "fgetpos", "fsetpos",
    "clearerr", "feof", "ferror", "perror", "remove", "rename", "tmpfile", "tmpnam", "setbuf", "setvbuf",
    // math.h, double and float forms (the float built-ins call `expf`, …)
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "exp",
    "exp2", "expm1", "frexp", "ldexp", "log", "log10", "log1p", "log2", "logb", "ilogb", "modf", "scalbn", "cbrt",
    "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor", "nearbyint", "rint",
    "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod", "remainder", "remquo", "copysign", "nan",
    "nextafter", "fdim", "fmax", "fmin", "fma", "acosf", "asinf", "atanf", "atan2f", "cosf", "sinf", "tanf",
    "coshf", "sinhf", "tanhf", "expf", "exp2f", "expm1f", "logf", "log10f", "log1pf", "log2f", "powf", "sqrtf",
    "fabsf", "floorf", "ceilf", "roundf", "truncf", "fmodf", "fmaxf", "fminf", "fmaf", "hypotf", "cbrtf",
    "erff", "erfcf",
    // ctype.h, time.h, signal.h, setjmp.h, locale.h
    "isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct", "isspace",
    "isupper", "isxdigit", "tolower", "toupper", "clock", "time", "difftime", "mktime", "strftime", "gmtime",
    "localtime", "asctime", "ctime", "timespec_get", "signal", "raise", "setjmp", "longjmp", "setlocale",
    "localeconv",
    // POSIX
    "open", "close", "read", "write", "lseek", "pipe", "dup", "dup2", "fork", "execv", "execve", "execvp",
    "waitpid", "wait", "kill", "getpid", "sleep", "usleep", "nanosleep", "mmap", "munmap", "mprotect", "unlink",
    "access", "stat", "fstat", "ioctl", "select", "poll", "socket", "connect", "bind", "listen", "accept",
    "send", "recv", "clock_gettime", "gettimeofday", "sysconf", "pthread_create", "pthread_join",
    "pthread_self", "pthread_mutex_lock", "pthread_mutex_unlock", "sched_yield", "errno",
];

/// Why `name` cannot be an exported function's name, with a hint, or `None`.
pub fn export_problem(name: &str) -> Option<(String, String)> {
    let hint = |s: &str| format!("rename it, e.g. to '{}'", s);
    if KEYWORDS.contains(&name) {
        return Some((format!("'{}' is a C or C++ keyword: the generated header could not declare it", name), hint(&format!("{}_fn", name))));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("afc_") {
        return Some((
            format!("'{}' begins with `afc_`, which is the runtime's (afc.h declares `afc_…` names)", name),
            hint(&format!("my_{}", &name[4..])),
        ));
    }
    if C_LIBRARY.contains(&name) {
        return Some((
            format!("'{}' is the name of a C library function: an export of that name would replace it in the whole program", name),
            hint(&format!("acc_{}", name)),
        ));
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0] == b'_' && (b[1] == b'_' || b[1].is_ascii_uppercase()) {
        return Some((
            format!("'{}' is reserved in C (names beginning with `__` or `_` and a capital are the implementation's)", name),
            hint(name.trim_start_matches('_')),
        ));
    }
    None
}
