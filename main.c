#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(void){ int64_t n=20000000; double*xs=malloc(n*8); for(int64_t i=0;i<n;i++) xs[i]=(double)((i*7919)%1013)/97.0-5.0;
 afc_f64_1d x={xs,{n}}; double best=1e9, best2=1e9;
 for(int r=0;r<7;r++){ afc_f64_1d a={0,{0}},b={0,{0}}; double t=now(); normalize2(x,&a,&b); t=now()-t; if(t<best)best=t; afc_free(a.data); afc_free(b.data);
   double s1,s2; t=now(); sums(x,&s1,&s2); t=now()-t; if(t<best2)best2=t; }
 printf("normalize2 %.2f ms  sums %.2f ms\n", best, best2); return 0;}
